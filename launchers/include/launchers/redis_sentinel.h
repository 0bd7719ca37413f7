// RedisSentinelSet: a master, its replica and Redis Sentinels watching them,
// started for a test on free loopback ports.
//
// The master and the replica (`--replicaof`) are diskless redis-servers
// (StartRedis). Each sentinel is `redis-server sentinel-P.conf --sentinel`
// with a config written, for the port it gets, into a temporary directory of
// the set's own (sentinels rewrite their config file): `sentinel monitor NAME
// 127.0.0.1 MASTER_PORT QUORUM` with a short down-after-milliseconds and
// failover-timeout, so a failover takes a few seconds. Every process is
// started through ServerProcess and stopped by PID; the destructor stops them
// all and deletes the directory. Every wait is bounded.
//
// Not thread-safe: one test thread drives a RedisSentinelSet.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "launchers/server_process.h"

namespace cachet::test {

struct SentinelSetOptions {
  std::string master_name = "cachet-master";
  int sentinels = 3;
  int quorum = 2;
  int down_after_ms = 1000;
  int failover_timeout_ms = 2000;
  std::string sentinel_password;  // requirepass of every sentinel; empty: none
};

class RedisSentinelSet {
 public:
  // Starts the master, the replica and the sentinels, and returns once the
  // replica is in sync and every sentinel lists it as linked.
  static Result<std::unique_ptr<RedisSentinelSet>> Start(SentinelSetOptions options = {});

  RedisSentinelSet(const RedisSentinelSet&) = delete;
  RedisSentinelSet& operator=(const RedisSentinelSet&) = delete;
  ~RedisSentinelSet();

  ServerProcess& master() const { return *master_; }
  ServerProcess& replica() const { return *replica_; }
  const std::vector<std::unique_ptr<ServerProcess>>& sentinels() const { return sentinels_; }
  const std::string& master_name() const { return options_.master_name; }
  // "127.0.0.1:P1,127.0.0.1:P2,...": the sentinels, for `servers`.
  std::string SentinelList() const;

  // Waits (bounded by `limit`) until every sentinel knows the other sentinels,
  // which a failover needs (they find each other through hello messages).
  Status WaitUntilAcquainted(std::chrono::milliseconds limit = std::chrono::seconds(15)) const;
  // Waits (bounded by `limit`) until every running sentinel, and at least one,
  // names the master at `port`.
  Status WaitForMasterPort(int port,
                           std::chrono::milliseconds limit = std::chrono::seconds(20)) const;

  // `redis-cli -h 127.0.0.1 -p PORT ARGS` (bounded by a timeout), its output
  // without the trailing newline; `password` is passed with -a when not empty.
  static std::string Cli(int port, const std::string& args, const std::string& password = "");
  // Cli() on a sentinel, with the set's sentinel password.
  std::string SentinelCli(const ServerProcess& sentinel, const std::string& args) const;

 private:
  explicit RedisSentinelSet(SentinelSetOptions options) : options_(std::move(options)) {}
  Status StartSentinels();
  // Waits until the replica is in sync with the master.
  Status WaitUntilSynced(std::chrono::milliseconds limit) const;
  // Waits until every sentinel lists the replica as linked.
  Status WaitUntilWatching(std::chrono::milliseconds limit) const;

  SentinelSetOptions options_;
  std::filesystem::path dir_;
  std::unique_ptr<ServerProcess> master_;
  std::unique_ptr<ServerProcess> replica_;
  std::vector<std::unique_ptr<ServerProcess>> sentinels_;
};

}  // namespace cachet::test
