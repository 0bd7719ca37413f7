// RedisSentinelSet: a loopback master, replica and sentinels for failover tests.
#include "launchers/redis_sentinel.h"

#include <cstdlib>
#include <fstream>
#include <system_error>
#include <thread>

#include "launchers/redis_server.h"

namespace cachet::test {

namespace {

using Clock = std::chrono::steady_clock;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

std::string RedisSentinelSet::Cli(int port, const std::string& args, const std::string& password) {
  // `timeout` bounds a redis-cli that would otherwise wait on a stalled server.
  std::string auth = password.empty() ? "" : " -a '" + password + "' --no-auth-warning";
  std::string out = CommandOutput("timeout 10 redis-cli -h 127.0.0.1 -p " + std::to_string(port) +
                                  auth + " " + args + " 2>&1");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string RedisSentinelSet::SentinelCli(const ServerProcess& sentinel,
                                          const std::string& args) const {
  return Cli(sentinel.port(), args, options_.sentinel_password);
}

Result<std::unique_ptr<RedisSentinelSet>> RedisSentinelSet::Start(SentinelSetOptions options) {
  std::unique_ptr<RedisSentinelSet> set(new RedisSentinelSet(std::move(options)));
  set->dir_ = MakeTempDirectory("cachet-sentinel-");
  if (set->dir_.empty()) {
    return Status::IoError("redis sentinel set: cannot create a temporary directory");
  }

  auto master = StartRedis();
  if (!master.ok()) return master.status();
  set->master_ = std::move(master).value();
  auto replica = StartRedis({"--replicaof", "127.0.0.1", std::to_string(set->master_->port())});
  if (!replica.ok()) return replica.status();
  set->replica_ = std::move(replica).value();
  // A sentinel asks a replica's state once when it finds it and then only every
  // 10 s: a replica in sync before the sentinels start is seen as linked at once.
  if (Status s = set->WaitUntilSynced(std::chrono::seconds(10)); !s.ok()) return s;
  if (Status s = set->StartSentinels(); !s.ok()) return s;
  if (Status s = set->WaitUntilWatching(std::chrono::seconds(15)); !s.ok()) return s;
  return set;
}

Status RedisSentinelSet::StartSentinels() {
  for (int i = 0; i < options_.sentinels; ++i) {
    auto argv_for_port = [dir = dir_, options = options_, master_port = master_->port()](int port) {
      const std::string p = std::to_string(port);
      const std::filesystem::path config = dir / ("sentinel-" + p + ".conf");
      const std::string& name = options.master_name;
      std::ofstream out(config);
      out << "port " << p << "\nbind 127.0.0.1\ndaemonize no\n"
          << "dir " << dir.string() << "\nlogfile sentinel-" << p << ".log\n"
          << "sentinel monitor " << name << " 127.0.0.1 " << master_port << " " << options.quorum
          << "\nsentinel down-after-milliseconds " << name << " " << options.down_after_ms
          << "\nsentinel failover-timeout " << name << " " << options.failover_timeout_ms
          << "\nsentinel parallel-syncs " << name << " 1\n";
      if (!options.sentinel_password.empty()) {
        // Sentinels talk to each other with the same password.
        out << "requirepass " << options.sentinel_password << "\nsentinel sentinel-pass "
            << options.sentinel_password << "\n";
      }
      out.close();
      return std::vector<std::string>{"redis-server", config.string(), "--sentinel"};
    };
    auto sentinel = ServerProcess::Start("redis-server --sentinel", argv_for_port);
    if (!sentinel.ok()) return sentinel.status();
    sentinels_.push_back(std::move(sentinel).value());
  }
  return Status::OK();
}

Status RedisSentinelSet::WaitUntilSynced(std::chrono::milliseconds limit) const {
  const Clock::time_point deadline = Clock::now() + limit;
  std::string last;
  while (Clock::now() < deadline) {
    if (Contains(last = Cli(replica_->port(), "info replication"), "master_link_status:up")) {
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::Timeout("redis sentinel set: the replica did not sync in time: " + last);
}

Status RedisSentinelSet::WaitUntilWatching(std::chrono::milliseconds limit) const {
  const Clock::time_point deadline = Clock::now() + limit;
  std::string last;
  // Each round asks the replica and every sentinel; the deadline bounds the rounds.
  while (Clock::now() < deadline) {
    bool ready = true;
    for (const auto& sentinel : sentinels_) {
      if (!ready) break;
      last = SentinelCli(*sentinel, "sentinel replicas " + options_.master_name);
      ready = Contains(last, "master-link-status\nok") &&
              Contains(last, "port\n" + std::to_string(replica_->port()));
    }
    if (ready) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Timeout("redis sentinel set: the replica was not watched in time: " +
                         last.substr(0, 2000));
}

Status RedisSentinelSet::WaitUntilAcquainted(std::chrono::milliseconds limit) const {
  const Clock::time_point deadline = Clock::now() + limit;
  const std::string others = "num-other-sentinels\n" + std::to_string(sentinels_.size() - 1);
  std::string last;
  while (Clock::now() < deadline) {
    bool ready = true;
    for (const auto& sentinel : sentinels_) {
      last = SentinelCli(*sentinel, "sentinel master " + options_.master_name);
      ready = ready && Contains(last, others);
    }
    if (ready) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Timeout("redis sentinel set: the sentinels did not find each other in time: " +
                         last.substr(0, 2000));
}

Status RedisSentinelSet::WaitForMasterPort(int port, std::chrono::milliseconds limit) const {
  const Clock::time_point deadline = Clock::now() + limit;
  const std::string expected = "127.0.0.1\n" + std::to_string(port);
  std::string last;
  while (Clock::now() < deadline) {
    bool agreed = true;
    int asked = 0;  // with every sentinel stopped, nobody agreed
    for (const auto& sentinel : sentinels_) {
      if (!sentinel->running()) continue;
      ++asked;
      last = SentinelCli(*sentinel, "sentinel get-master-addr-by-name " + options_.master_name);
      agreed = agreed && last == expected;
    }
    if (asked > 0 && agreed) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Timeout(
      "redis sentinel set: the sentinels do not name port " + std::to_string(port) +
      " in time: " + (last.empty() ? std::string("no sentinel is running") : last));
}

std::string RedisSentinelSet::SentinelList() const {
  std::string out;
  for (const auto& sentinel : sentinels_) {
    if (!out.empty()) out += ",";
    out += sentinel->address();
  }
  return out;
}

RedisSentinelSet::~RedisSentinelSet() {
  for (auto& sentinel : sentinels_) (void)sentinel->Stop();
  sentinels_.clear();
  if (replica_) (void)replica_->Stop();
  if (master_) (void)master_->Stop();
  // Only the directory this object created: sentinel configs and logs.
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

}  // namespace cachet::test
