// RedisCluster: a real Redis Cluster started for a test on free loopback ports.
//
// Each node is `redis-server --port P --cluster-enabled yes --cluster-config-file
// nodes-P.conf --save '' --appendonly no --bind 127.0.0.1`, run in a temporary
// directory of its own and started through ServerProcess (stopped by PID). The
// cluster bus gets a free port of its own (--cluster-port), since the default
// P+10000 may be out of range. `redis-cli --cluster create` joins the nodes,
// giving each master `replicas` replicas, and Start() returns once every node
// reports cluster_state:ok and agrees on the slot map. Every wait is bounded.
//
// With `tls` set, the nodes take TLS only: `--port 0 --tls-port P` (P is the
// port ServerProcess picked), the cluster bus and replication over TLS too
// (tls-cluster, tls-replication), presenting tls.server, client certificates
// not required; redis-cli then speaks TLS trusting tls.ca (NodeCli).
// The destructor stops every node and deletes the directory with its
// nodes-*.conf files, so no later start rejoins this cluster.
//
// Not thread-safe: one test thread drives a RedisCluster.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launchers/server_process.h"
#include "launchers/tls_servers.h"

namespace cachet::test {

// The certificates of a TLS-only cluster (tls_servers.h makes them).
struct RedisClusterTls {
  CertificatePair server;  // every node presents it, to clients and to each other
  std::string ca;          // what the nodes and redis-cli trust
};

struct RedisClusterOptions {
  int masters = 3;
  int replicas = 0;  // per master
  // Milliseconds without an answer before a node is considered failed. Redis
  // times a failed election's retry from it (4x), so Failover()'s retries rely
  // on a short one.
  int node_timeout_ms = 2000;
  std::vector<std::string> extra_args;  // appended to every node's argv
  std::optional<RedisClusterTls> tls;   // set: TLS-only nodes (see above)
};

class RedisCluster {
 public:
  static Result<std::unique_ptr<RedisCluster>> Start(RedisClusterOptions options = {});

  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;
  ~RedisCluster();

  // Every node, masters and replicas as created (redis-cli assigns the roles).
  const std::vector<std::unique_ptr<ServerProcess>>& nodes() const { return nodes_; }
  // "127.0.0.1:P1,127.0.0.1:P2,...": every node, for `servers`.
  std::string seeds() const;

  // The output of `redis-cli -p port ARGS` (bounded by `timeout`), without the
  // trailing newline. ARGS is passed to the shell as written.
  static std::string Cli(int port, const std::string& args);
  // Promotes the replica at `port` with CLUSTER FAILOVER and waits until it reports
  // itself master. Redis drops a manual failover that has not completed in 5 s
  // (a busy machine can make it miss), so the command is sent again, 3 times at
  // most, each followed by a wait of up to 8 s. False if it never became master.
  static bool Failover(int port);
  // Cli() to a node of this cluster: over TLS when the cluster uses it.
  std::string NodeCli(int port, const std::string& args) const;

  // What the nodes logged about failure detection, elections and role changes,
  // each line led by its node's port: tells a test's failure which failover Redis ran.
  std::string RoleChangeLog() const;

  // The ports of the nodes that are masters now, and of those that are replicas.
  std::vector<int> MasterPorts() const;
  std::vector<int> ReplicaPorts() const;

  // Waits (bounded by `limit`) until every running node says cluster_state:ok,
  // every replica's link to its master is up, and `redis-cli --cluster check`
  // finds every slot covered and agreed on.
  // The bound is generous because it only costs time on failure: once, after a
  // master was stopped and resumed, the cluster took over 20 s to agree again
  // on a loaded 2-core machine.
  Status WaitUntilHealthy(std::chrono::milliseconds limit = std::chrono::seconds(60)) const;

 private:
  RedisCluster() = default;
  Status StartNodes(const RedisClusterOptions& options);
  Status Create(int replicas) const;
  std::vector<int> PortsWithRole(const std::string& role) const;

  std::filesystem::path dir_;
  std::string cli_options_;  // "--tls --cacert CA" for a TLS cluster, else empty
  std::vector<std::unique_ptr<ServerProcess>> nodes_;
};

}  // namespace cachet::test
