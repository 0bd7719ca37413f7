// RedisCluster: starting, joining, checking and tearing down a loopback Redis Cluster.
#include "launchers/redis_cluster.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <system_error>
#include <thread>

namespace cachet::test {

namespace {

using Clock = std::chrono::steady_clock;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `timeout` bounds a redis-cli that would otherwise wait on a stalled node.
std::string RunCli(const std::string& options, int port, const std::string& args) {
  std::string out = CommandOutput("timeout 60 redis-cli " + options + " -h 127.0.0.1 -p " +
                                  std::to_string(port) + " " + args + " 2>&1");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The TLS part of a node's argv: TLS only, between nodes too.
std::vector<std::string> TlsArgs(const RedisClusterTls& tls, const std::string& port) {
  return {"--port",
          "0",
          "--tls-port",
          port,
          "--tls-cluster",
          "yes",
          "--tls-replication",
          "yes",
          "--tls-cert-file",
          tls.server.cert,
          "--tls-key-file",
          tls.server.key,
          "--tls-ca-cert-file",
          tls.ca,
          "--tls-auth-clients",
          "no"};
}

}  // namespace

std::string RedisCluster::Cli(int port, const std::string& args) { return RunCli("", port, args); }

bool RedisCluster::Failover(int port) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (Cli(port, "cluster failover") != "OK") return false;
    for (int i = 0; i < 80; ++i) {
      if (Cli(port, "role").rfind("master", 0) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return false;
}

std::string RedisCluster::NodeCli(int port, const std::string& args) const {
  return RunCli(cli_options_, port, args);
}

Result<std::unique_ptr<RedisCluster>> RedisCluster::Start(RedisClusterOptions options) {
  std::unique_ptr<RedisCluster> cluster(new RedisCluster());
  const std::string dir = MakeTempDirectory("cachet-cluster-");
  if (dir.empty()) return Status::IoError("redis cluster: cannot create a temporary directory");
  cluster->dir_ = dir;
  if (options.tls) cluster->cli_options_ = "--tls --cacert " + options.tls->ca;
  if (Status s = cluster->StartNodes(options); !s.ok()) return s;
  if (Status s = cluster->Create(options.replicas); !s.ok()) return s;
  if (Status s = cluster->WaitUntilHealthy(); !s.ok()) return s;
  return cluster;
}

Status RedisCluster::StartNodes(const RedisClusterOptions& options) {
  const int count = options.masters * (1 + options.replicas);
  for (int i = 0; i < count; ++i) {
    // A restart keeps the node's bus port, which the other nodes know it by.
    auto bus_ports = std::make_shared<std::map<int, int>>();
    auto argv_for_port = [dir = dir_.string(), options, bus_ports](int port) {
      int& bus_port = (*bus_ports)[port];
      if (bus_port == 0) bus_port = FindFreeLoopbackPort();
      std::string p = std::to_string(port);
      std::vector<std::string> argv = {"redis-server"};
      std::vector<std::string> listen =
          options.tls ? TlsArgs(*options.tls, p) : std::vector<std::string>{"--port", p};
      argv.insert(argv.end(), listen.begin(), listen.end());
      std::vector<std::string> rest = {"--cluster-enabled",
                                       "yes",
                                       "--cluster-config-file",
                                       "nodes-" + p + ".conf",
                                       "--cluster-port",
                                       std::to_string(bus_port),
                                       "--cluster-node-timeout",
                                       std::to_string(options.node_timeout_ms),
                                       "--save",
                                       "",
                                       "--appendonly",
                                       "no",
                                       // A replica's first sync starts at once, not 5 s late.
                                       "--repl-diskless-sync-delay",
                                       "0",
                                       "--bind",
                                       "127.0.0.1",
                                       "--dir",
                                       dir,
                                       "--logfile",
                                       "node-" + p + ".log"};
      argv.insert(argv.end(), rest.begin(), rest.end());
      argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
      return argv;
    };
    auto node = ServerProcess::Start("redis-server (cluster node)", argv_for_port);
    if (!node.ok()) return node.status();
    nodes_.push_back(std::move(node).value());
  }
  return Status::OK();
}

Status RedisCluster::Create(int replicas) const {
  std::string args = "--cluster create";
  for (const auto& node : nodes_) args += " " + node->address();
  args += " --cluster-replicas " + std::to_string(replicas) + " --cluster-yes";
  std::string out = NodeCli(nodes_.front()->port(), args);
  if (!Contains(out, "[OK] All 16384 slots covered")) {
    return Status::Unavailable("redis cluster: create failed: " + out.substr(0, 2000));
  }
  return Status::OK();
}

Status RedisCluster::WaitUntilHealthy(std::chrono::milliseconds limit) const {
  const Clock::time_point deadline = Clock::now() + limit;
  std::string last;
  // Each round asks every node; the deadline bounds the rounds.
  while (Clock::now() < deadline) {
    bool healthy = true;
    int any_port = 0;
    // The first node found unsettled ends the round, its answer kept for the error.
    for (const auto& node : nodes_) {
      if (!node->running()) continue;
      any_port = node->port();
      const std::string info = NodeCli(any_port, "cluster info");
      // A replica still in its first sync could not be promoted without loss
      // (asked only of a node whose cluster state is ok).
      const std::string replication =
          Contains(info, "cluster_state:ok") ? NodeCli(any_port, "info replication") : "";
      healthy = Contains(replication, "role:master") ||
                Contains(replication, "master_link_status:up");
      if (!healthy) {
        last = "node " + std::to_string(any_port) + ":\n" + info + "\n" + replication;
        break;
      }
    }
    if (healthy && any_port != 0) {
      last = NodeCli(any_port, "--cluster check 127.0.0.1:" + std::to_string(any_port));
      if (Contains(last, "[OK] All nodes agree about slots configuration.") &&
          Contains(last, "[OK] All 16384 slots covered.") && !Contains(last, "[WARNING]")) {
        return Status::OK();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Timeout("redis cluster: not healthy in time: " + last.substr(0, 2000));
}

std::string RedisCluster::RoleChangeLog() const {
  static const char* const kTopics[] = {"ailover", "FAIL",    "failing", "Cluster state",
                                        "lection", "Reconfiguring", "timed out", "MASTER",
                                        "PSYNC",   "sync"};
  std::string out;
  for (const auto& node : nodes_) {
    std::ifstream log(dir_ / ("node-" + std::to_string(node->port()) + ".log"));
    // Bounded by the log's length.
    for (std::string line; std::getline(log, line);) {
      for (const char* topic : kTopics) {
        if (Contains(line, topic)) {
          out += std::to_string(node->port()) + ": " + line + "\n";
          break;
        }
      }
    }
  }
  return out;
}

std::vector<int> RedisCluster::PortsWithRole(const std::string& role) const {
  std::vector<int> ports;
  for (const auto& node : nodes_) {
    if (!node->running()) continue;
    std::string out = NodeCli(node->port(), "role");
    if (out.compare(0, role.size(), role) == 0) ports.push_back(node->port());
  }
  return ports;
}

std::vector<int> RedisCluster::MasterPorts() const { return PortsWithRole("master"); }
std::vector<int> RedisCluster::ReplicaPorts() const { return PortsWithRole("slave"); }

std::string RedisCluster::seeds() const {
  std::string out;
  for (const auto& node : nodes_) {
    if (!out.empty()) out += ",";
    out += node->address();
  }
  return out;
}

RedisCluster::~RedisCluster() {
  for (auto& node : nodes_) (void)node->Stop();
  nodes_.clear();
  // Only the directory this object created: nodes-*.conf, logs.
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

}  // namespace cachet::test
