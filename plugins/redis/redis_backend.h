// RedisBackend: the Redis store, on standalone servers, on a Redis Cluster, or
// on a master found through Redis Sentinel.
//
// Layering: net::Connection -> net::ServerPool (pooled connections, health) ->
// RedisSession (handshake, pipelined exchange) -> a CommandRouter (where a key
// goes: StandaloneRouter spreads keys over `servers` by a distribution;
// ClusterRouter follows the cluster's slot map, MOVED and ASK; SentinelRouter
// follows the master the sentinels name, see sentinel_router.h) -> this backend,
// whose methods each encode one command (redis_commands.h) and map its reply
// (redis_replies.h); batches go through RedisBatch.
//
// Operation mapping: get GET; set SET [PX ms]; add SET NX; replace SET XX; remove
// DEL; touch PEXPIRE (PERSIST for no TTL); get-and-touch GETEX; flush FLUSHDB;
// stats INFO. Append and prepend run as Lua scripts (one atomic step, the key's
// TTL kept, kNotStored on a missing key), called by SHA with EVALSHA and sent in
// full with EVAL only when the server answers NOSCRIPT.
// Counters (`counters = redis`, the default) are Redis' own INCRBY/DECRBY:
// signed 64-bit, a missing key counts from 0 (and is created), an overflow is
// kInvalidArgument. `counters = memcached` behaves as memcached's, through a
// script: unsigned 64-bit, wrapping, decr stopping at 0, a missing key
// kNotFound. Extension("counters") answers which ("redis" or "memcached").
// CAS: a value's token is the first 64 bits of the SHA-1 of its bytes
// (cas_token.h), so any string has one and values stay raw. Gets() is GET plus
// that hash on the client (Get() leaves cas 0, so plain reads never pay for it);
// a cas store runs the cas script (lua_scripts.h), which compares the token and
// SETs atomically: kExists when it changed, kNotFound when the key is gone.
// Identical bytes share a token (ABA; docs/redis.md).
// Redis has no flags: the core's envelope (envelope.h) wraps this backend.
//
// In cluster mode the database is always 0 (Redis Cluster has no SELECT), flush
// and stats go to every primary, and keys sharing a {hash tag} share a slot.
// In sentinel mode every command goes to the master the sentinels name (reads,
// with read_from = replica, to one of its replicas), followed through failovers.
//
// Thread-safe: threads share one backend; each call borrows a pooled connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/server_pool.h"
#include "cluster_topology.h"
#include "command_router.h"
#include "redis_commands.h"
#include "redis_session.h"
#include "sentinel_router.h"

namespace cachet::redis {

enum class RedisMode : std::uint8_t {
  kStandalone,  // independent servers; keys placed by `distribution`
  kCluster,     // a Redis Cluster; `servers` are seed nodes
  kSentinel,    // a master found through Redis Sentinel; `servers` are the sentinels
};

struct RedisOptions {
  RedisMode mode = RedisMode::kStandalone;
  std::vector<net::ServerAddress> servers;
  net::DistributionKind distribution = net::DistributionKind::kKetama;
  net::ServerPoolOptions pool;
  SessionSettings session;
  CounterMode counters = CounterMode::kNative;
  ClusterSettings cluster;    // kCluster only; `servers` become its seeds
  SentinelSettings sentinel;  // kSentinel only; `servers` become its sentinels
};

// The lock key of GetOrCompute's lease on `key`, in KEY's cluster slot (the
// lease script touches both): "KEY#lease" when KEY has a hash tag, else
// "{KEY}#lease", or "{N}KEY#lease" for a key with a '}' and no tag, N being
// SlotTag(KeySlot(KEY)) (a tag of KEY itself would end at its '}').
std::string LeaseKeyOf(std::string_view key);

class RedisBackend final : public Backend {
 public:
  static constexpr Capabilities kCapabilities{
      Capability::kNativeTtl,   Capability::kAppendPrepend, Capability::kTouch,
      Capability::kCounters,    Capability::kFlush,         Capability::kStats,
      Capability::kGetAndTouch, Capability::kPipelining,    Capability::kCas,
      Capability::kNativeLease};
  // What a Redis store offers, standalone or cluster: the plugin declares it
  // (cachet check) and capabilities() returns it (Cache::Open). Sentinel mode
  // offers no invalidations (see SubscribeInvalidations).
  static constexpr Capabilities kOffered = kCapabilities.with(Capability::kInvalidations);

  // Commands in flight per server: a batch is sent in rounds of at most this
  // many, so neither side's socket buffers fill up with unread replies.
  static constexpr std::size_t kMaxInFlight = 1024;

  // REQUIRES: options.servers is not empty.
  explicit RedisBackend(RedisOptions options);

  std::string_view name() const noexcept override { return "redis"; }
  // kOffered; kCapabilities in sentinel mode.
  Capabilities capabilities() const noexcept override {
    return options_.mode == RedisMode::kSentinel ? kCapabilities : kOffered;
  }

  Status Get(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Touch(std::string_view key, Ttl ttl) override;
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out) override;
  // Get() plus the value's CAS token (cas_token.h); Get() itself leaves cas 0.
  Status Gets(std::string_view key, Item* out) override;
  // FLUSHDB on every server; the first error, if any.
  Status Flush() override;
  // INFO of every server; names prefixed with "host:port " when there are several.
  Status Stats(StatsMap* out) override;
  Status Health(std::vector<ServerHealth>* out) const override {
    router_->AppendHealth(out);
    return Status::OK();
  }
  // Pipelined: each server's share in one round trip (per kMaxInFlight
  // operations), all servers at once.
  void Execute(std::span<Operation> batch) override;
  // "counters": one reply, "redis" or "memcached", the counter semantics in use.
  Status Extension(std::string_view command, std::span<const std::string> args,
                   std::vector<std::string>* reply) override;

  // GetOrCompute's lease (kNativeLease): the lease script reads the value and
  // takes the lock key (LeaseKeyOf) with SET NX PX in one round trip, its
  // value the request's owner token; EndLease deletes the lock if it still
  // holds that token (a script: compare-and-delete).
  Status LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                  LeaseGrant* grant, std::uint64_t* lease_cas) override;
  Status EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end) override;

  // The near cache's invalidations (kInvalidations): CLIENT TRACKING ON BCAST
  // connections, one per server (InvalidationTracker) or one per cluster
  // primary, following the slot map (ClusterTracker). Not in sentinel mode: a
  // link to one master would not follow a failover. The subscription must be
  // destroyed before this backend.
  Status SubscribeInvalidations(std::span<const std::string> prefixes,
                                InvalidationListener* listener,
                                std::unique_ptr<InvalidationSubscription>* subscription) override;

  // The router, for tests that look at the cluster topology.
  CommandRouter& router() noexcept { return *router_; }

 private:
  Status RunOnKey(std::string_view key, std::string_view request, const ReplyFn& on_reply) {
    return router_->RunOnKey(key, request, on_reply);
  }
  Status Counter(bool increment, std::string_view key, std::uint64_t delta, std::uint64_t* value);
  // A script call about `key` by EVALSHA, sent again with EVAL on NOSCRIPT.
  // `encode(std::string* out, bool by_source)` appends the call by SHA, or in
  // full when by_source. A template, so the hot counter path allocates nothing.
  template <class Encode>
  Status RunScript(std::string_view key, const Encode& encode, const ReplyFn& on_reply);

  RedisOptions options_;
  RedisSession session_;
  std::unique_ptr<CommandRouter> router_;
};

}  // namespace cachet::redis
