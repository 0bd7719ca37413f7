// run_conformance STORE KIT [ARGS...]: runs the conformance kit against a bundled
// store.
//
// Starts what STORE needs on free loopback ports (memcached, redis-server, a
// 3-master Redis Cluster, a master with a replica and three sentinels, or the
// Tokyo Tyrant test server; nothing for memory),
// writes a config naming it, runs `KIT -c CONFIG [limits] ARGS...`, then stops the
// servers by PID and removes the config. Exits with KIT's status, or 1 when the
// store cannot be prepared (a missing server program fails the test, it never
// passes silently). memcached is spoken in the meta protocol; ARGS
// `-o memcached.protocol=text` override it. memcached-unix and redis-unix reach
// their server over a Unix socket; memcached-tls and redis-tls over TLS, with
// certificates made for the run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "launchers/memcached_server.h"
#include "launchers/redis_cluster.h"
#include "launchers/redis_sentinel.h"
#include "launchers/redis_server.h"
#include "launchers/tls_servers.h"
#ifdef CACHET_WITH_TT_SERVER
#include "launchers/tokyotyrant_server.h"
#endif

namespace cachet::test {

namespace {

// memcached's own item limit, which the memcached, memory and Tokyo Tyrant
// configs below mirror in max_item_size.
constexpr std::string_view kMaxItemSize = "1048576";

// What a store needs running, the config that reaches it, and the limits the
// kit is told about. The servers stop (by PID) when this is destroyed.
struct PreparedStore {
  std::string config;
  std::vector<std::string> limits;
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<RedisCluster> cluster;
  std::unique_ptr<RedisSentinelSet> sentinel_set;
  std::unique_ptr<UnixSocketServer> unix_server;
  std::unique_ptr<TestCertificates> certificates;
};

std::string CacheSection(std::string_view backend) {
  return "[cache]\nbackend = " + std::string(backend) + "\nnamespace = conformance:\n";
}

// Moves a started server into `store`; its status otherwise.
Status Keep(Result<std::unique_ptr<ServerProcess>> started, PreparedStore* store) {
  if (!started.ok()) return started.status();
  store->server = std::move(started).value();
  return Status::OK();
}

std::string MemcachedSection(const std::string& servers) {
  return "[memcached]\nservers = " + servers +
         "\nprotocol = meta\nmax_item_size = " + std::string(kMaxItemSize) + "\n";
}

// memcached-unix, redis-unix, memcached-tls and redis-tls.
Status PrepareTransport(std::string_view name, PreparedStore* store) {
  const bool memcached = name.starts_with("memcached");
  const std::string backend = memcached ? "memcached" : "redis";
  if (memcached) {
    store->limits = {"--max-key-size", "250", "--max-value-size", std::string(kMaxItemSize)};
  }
  if (name.ends_with("-unix")) {
    auto started = memcached ? UnixSocketServer::StartMemcached() : UnixSocketServer::StartRedis();
    if (!started.ok()) return started.status();
    store->unix_server = std::move(started).value();
    const std::string servers = store->unix_server->address();
    store->config = CacheSection(backend) + (memcached ? MemcachedSection(servers)
                                                       : "[redis]\nservers = " + servers + "\n");
    return Status::OK();
  }
  auto certificates = TestCertificates::Make();
  if (!certificates.ok()) return certificates.status();
  store->certificates = std::move(certificates).value();
  const TestCertificates& certs = *store->certificates;
  Status s = Keep(memcached ? StartMemcachedTls(certs.server(), certs.ca(), false)
                            : StartRedisTls(certs.server(), certs.ca(), false),
                  store);
  if (!s.ok()) return s;
  const std::string servers = store->server->address();
  store->config = CacheSection(backend) +
                  (memcached ? MemcachedSection(servers) : "[redis]\nservers = " + servers + "\n") +
                  "tls = true\ntls_ca_file = " + certs.ca() + "\n";
  return Status::OK();
}

Status Prepare(std::string_view name, PreparedStore* store) {
  if (name.ends_with("-unix") || name.ends_with("-tls")) return PrepareTransport(name, store);
  if (name == "memory") {
    store->config = CacheSection("memory") + "[memory]\nmax_bytes = 134217728\n";
    store->limits = {"--max-key-size", "250", "--max-value-size", std::string(kMaxItemSize)};
    return Status::OK();
  }
  if (name == "memcached") {
    if (Status s = Keep(StartMemcached(), store); !s.ok()) return s;
    store->config = CacheSection("memcached") +
                    "[memcached]\nservers = " + store->server->address() +
                    "\nprotocol = meta\nmax_item_size = " + std::string(kMaxItemSize) + "\n";
    store->limits = {"--max-key-size", "250", "--max-value-size", std::string(kMaxItemSize)};
    return Status::OK();
  }
  if (name == "redis") {
    if (Status s = Keep(StartRedis(), store); !s.ok()) return s;
    store->config = CacheSection("redis") + "[redis]\nservers = " + store->server->address() + "\n";
    return Status::OK();
  }
  if (name == "redis-cluster") {
    auto started = RedisCluster::Start();
    if (!started.ok()) return started.status();
    store->cluster = std::move(started).value();
    store->config = CacheSection("redis") +
                    "[redis]\nmode = cluster\nservers = " + store->cluster->seeds() + "\n";
    return Status::OK();
  }
  if (name == "redis-sentinel") {
    auto started = RedisSentinelSet::Start();
    if (!started.ok()) return started.status();
    store->sentinel_set = std::move(started).value();
    store->config = CacheSection("redis") +
                    "[redis]\nmode = sentinel\nservers = " + store->sentinel_set->SentinelList() +
                    "\nsentinel_master = " + store->sentinel_set->master_name() + "\n";
    return Status::OK();
  }
#ifdef CACHET_WITH_TT_SERVER
  if (name == "tokyotyrant") {
    if (Status s = Keep(StartTokyoTyrant(), store); !s.ok()) return s;
    store->config = CacheSection("tokyotyrant") +
                    "[tokyotyrant]\nservers = " + store->server->address() +
                    "\nmax_item_size = " + std::string(kMaxItemSize) + "\n";
    store->limits = {"--max-value-size", std::string(kMaxItemSize)};
    return Status::OK();
  }
#endif
  return Status::InvalidArgument("no bundled store named '" + std::string(name) + "'");
}

// Writes `text` to a fresh file under $TMPDIR (or /tmp); its path, or "" on failure.
std::string WriteConfig(const std::string& text) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                     "/cachet-conformance-XXXXXX.conf";
  int fd = ::mkstemps(path.data(), 5);
  if (fd < 0) return {};
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}

// Runs argv[0] with `argv` and waits: its exit status, or 1 if it did not exit.
int Run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    std::perror(argv[0]);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "run_conformance: " << args[0] << " died of signal " << WTERMSIG(status) << '\n';
  return 1;
}

}  // namespace

}  // namespace cachet::test

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: run_conformance STORE KIT [ARGS...]\n";
    return 2;
  }
  cachet::test::PreparedStore store;
  if (cachet::Status s = cachet::test::Prepare(argv[1], &store); !s.ok()) {
    std::cerr << "run_conformance: " << argv[1] << ": " << s.ToString() << '\n';
    return 1;
  }
  const std::string config = cachet::test::WriteConfig(store.config);
  if (config.empty()) {
    std::perror("run_conformance: config file");
    return 1;
  }
  std::vector<std::string> args = {argv[2], "-c", config};
  args.insert(args.end(), store.limits.begin(), store.limits.end());
  args.insert(args.end(), argv + 3, argv + argc);
  const int status = cachet::test::Run(args);
  std::remove(config.c_str());
  return status;
}
