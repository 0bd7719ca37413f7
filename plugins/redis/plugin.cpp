// The redis plugin's descriptor, option schema and factory.
#include "cachet/plugin.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "cachet/net/pool_config.h"
#include "redis_backend.h"

namespace cachet::redis {
namespace {

constexpr OptionSpec kOwnOptions[] = {
    {"mode", OptionType::kString, "standalone",
     "standalone (independent servers), cluster (a Redis Cluster; servers are seed nodes) or "
     "sentinel (the master Redis Sentinel names; servers are the sentinels)",
     false, false, "standalone|cluster|sentinel"},
    {"servers", OptionType::kList, "127.0.0.1:6379",
     "standalone: servers as host:port[:weight], comma-separated, keys spread over several by "
     "`distribution`; cluster: seed nodes the slot map is first read from; sentinel: the "
     "sentinels, asked in this order. The port defaults to 6379 (26379 in sentinel mode)"},
    {"distribution", OptionType::kString, "ketama", "key placement over several standalone servers",
     false, false, "ketama|modula|cache-memcached|cmf-ketama"},
    {"resp", OptionType::kInt, "2", "protocol version: 2, or 3 (sends HELLO 3)", false, false,
     "2|3"},
    {"username", OptionType::kString, "", "ACL user for AUTH; empty: the default user"},
    {"password", OptionType::kString, "", "password for AUTH; empty: no AUTH", false, true},
    {"db", OptionType::kInt, "0", "database number, selected with SELECT when not 0"},
    {"client_name", OptionType::kString, "cachet", "name set with CLIENT SETNAME; empty: not set"},
    {"counters", OptionType::kString, "redis",
     "incr/decr semantics: redis (INCRBY/DECRBY: signed 64-bit, a missing key counts from 0) "
     "or memcached (unsigned 64-bit, wrapping, a missing key is not found; a server-side "
     "script)",
     false, false, "redis|memcached"},
    {"sentinel_master", OptionType::kString, "",
     "sentinel: the name the sentinels monitor the master by (required in that mode)"},
    {"sentinel_username", OptionType::kString, "",
     "sentinel: ACL user for AUTH on the sentinels; empty: the default user"},
    {"sentinel_password", OptionType::kString, "",
     "sentinel: password for AUTH on the sentinels (not the data nodes'); empty: no AUTH", false,
     true},
    {"read_from", OptionType::kString, "master",
     "sentinel: where reads go: master, or replica (one the sentinels list as up; the master "
     "when there is none)",
     false, false, "master|replica"},
    {"sentinel_refresh_interval_ms", OptionType::kInt, "250",
     "sentinel: least time between two questions to the sentinels prompted by failing calls, "
     "in milliseconds"},
    {"max_value_size", OptionType::kInt, "536870912",
     "largest reply bulk string accepted, in bytes (Redis' own proto-max-bulk-len)"},
    {"cluster_refresh_interval_ms", OptionType::kInt, "1000",
     "cluster: least time between two reloads of the slot map, in milliseconds"},
    {"cluster_max_redirects", OptionType::kInt, "16",
     "cluster: attempts per command (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, a lost node)"},
    {"cluster_retry_wait_ms", OptionType::kInt, "20",
     "cluster: first wait before retrying after TRYAGAIN or CLUSTERDOWN; grows with each "
     "attempt up to ten times this"},
};
constexpr auto kOptions = net::JoinOptionSpecs(kOwnOptions, net::kServerPoolOptionSpecs);

Status ReadClusterNumbers(const ConfigSection& section, ClusterSettings* cluster) {
  std::int64_t refresh = 0, redirects = 0, wait = 0;
  Status s = section.GetIntInRange("cluster_refresh_interval_ms", 0, 3600 * 1000, &refresh);
  if (s.ok()) s = section.GetIntInRange("cluster_max_redirects", 1, 1000, &redirects);
  if (s.ok()) s = section.GetIntInRange("cluster_retry_wait_ms", 0, 60 * 1000, &wait);
  if (!s.ok()) return s;
  cluster->refresh_interval = std::chrono::milliseconds(refresh);
  cluster->max_redirects = static_cast<std::uint32_t>(redirects);
  cluster->retry_wait = std::chrono::milliseconds(wait);
  return Status::OK();
}

Status ReadNumbers(const ConfigSection& section, RedisOptions* o) {
  std::int64_t db = 0, max_value = 0;
  Status s = net::ReadServerPoolOptions(section, &o->pool);
  if (s.ok()) s = section.GetIntInRange("db", 0, 1000000, &db);
  if (s.ok()) s = section.GetIntInRange("max_value_size", 1, std::int64_t{1} << 32, &max_value);
  if (s.ok()) s = ReadClusterNumbers(section, &o->cluster);
  std::int64_t sentinel_refresh = 0;
  if (s.ok()) {
    s = section.GetIntInRange("sentinel_refresh_interval_ms", 0, 60 * 1000, &sentinel_refresh);
  }
  if (!s.ok()) return s;
  o->sentinel.refresh_interval = std::chrono::milliseconds(sentinel_refresh);
  o->session.db = db;
  o->session.limits.max_bulk_length = static_cast<std::size_t>(max_value);
  return Status::OK();
}

RedisMode ModeOf(const std::string& mode) {
  if (mode == "cluster") return RedisMode::kCluster;
  return mode == "sentinel" ? RedisMode::kSentinel : RedisMode::kStandalone;
}

// The sentinel options: the master's name is required in that mode, and the
// options that only mean something there are refused elsewhere.
Status ReadSentinelOptions(const ConfigSection& section, RedisOptions* o) {
  SentinelSettings& sentinel = o->sentinel;
  sentinel.master = section.GetString("sentinel_master");
  sentinel.session.username = section.GetString("sentinel_username");
  sentinel.session.password = section.GetString("sentinel_password");
  sentinel.session.client_name = o->session.client_name;
  sentinel.session.limits = o->session.limits;
  sentinel.read_from_replica = section.GetString("read_from") == "replica";
  if (o->mode != RedisMode::kSentinel) {
    for (const char* key : {"sentinel_master", "sentinel_username", "sentinel_password"}) {
      if (!section.GetString(key).empty()) return section.ErrorAt(key, "needs mode = sentinel");
    }
    if (sentinel.read_from_replica) return section.ErrorAt("read_from", "needs mode = sentinel");
    return Status::OK();
  }
  if (sentinel.master.empty()) {
    return section.ErrorAt("sentinel_master",
                           "is required with mode = sentinel (the name the sentinels monitor "
                           "the master by)");
  }
  if (!sentinel.session.username.empty() && sentinel.session.password.empty()) {
    return section.ErrorAt("sentinel_username", "is set but sentinel_password is empty");
  }
  return Status::OK();
}

Status ReadOptions(const ConfigSection& section, RedisOptions* o) {
  o->mode = ModeOf(section.GetString("mode"));
  // Sentinels listen on 26379 by default, data nodes on 6379.
  const std::uint16_t default_port = o->mode == RedisMode::kSentinel ? 26379 : 6379;
  if (Status s = net::ReadServers(section, default_port, &o->servers, &o->distribution); !s.ok()) {
    return s;
  }
  o->session.resp = static_cast<int>(section.GetInt("resp"));
  o->session.username = section.GetString("username");
  o->session.password = section.GetString("password");
  o->session.client_name = section.GetString("client_name");
  o->counters =
      section.GetString("counters") == "memcached" ? CounterMode::kMemcached : CounterMode::kNative;
  if (!o->session.username.empty() && o->session.password.empty()) {
    return section.ErrorAt("username", "is set but password is empty");
  }
  if (Status s = ReadNumbers(section, o); !s.ok()) return s;
  if (Status s = ReadSentinelOptions(section, o); !s.ok()) return s;
  if (o->mode == RedisMode::kCluster && o->session.db != 0) {
    return section.ErrorAt("db", "Redis Cluster (mode = cluster) has only database 0");
  }
  return Status::OK();
}

// The descriptor's validation hook: the factory's own option reading, so that
// `cachet check` refuses exactly what opening would.
Status ValidateRedisOptions(const ConfigSection& section) noexcept {
  return GuardedCreate("redis", [&] {
    RedisOptions options;
    return ReadOptions(section, &options);
  });
}

Status CreateRedisBackend(const PluginContext& context, std::unique_ptr<Backend>* out) noexcept {
  return GuardedCreate("redis", [&] {
    RedisOptions options;
    if (Status s = ReadOptions(context.options, &options); !s.ok()) return s;
    options.sentinel.logger = context.logger;
    *out = std::make_unique<RedisBackend>(std::move(options));
    return Status::OK();
  });
}

constexpr PluginDescriptor kDescriptor{
    kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "redis",
    CACHET_VERSION_STRING,
    "Redis servers, a Redis Cluster or a Sentinel-managed master over RESP2 or RESP3, with AUTH, "
    "SELECT and scripts",
    kOptions.data(),
    kOptions.size(),
    // The same rule as RedisBackend::capabilities(): both modes offer invalidations.
    RedisBackend::kOffered.bits(),
    &CreateRedisBackend,
    &ValidateRedisOptions,
};

}  // namespace
}  // namespace cachet::redis

CACHET_DEFINE_PLUGIN(cachet::redis::kDescriptor)
