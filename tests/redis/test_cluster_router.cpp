// ClusterRouter against a fake cluster node on a loopback port: TRYAGAIN and
// CLUSTERDOWN are retried a bounded number of times, a slot map that cannot be
// loaded is an error, and a MOVED loop ends. The fake serves every slot itself
// and answers commands from a script, so each path is taken exactly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis_backend.h"
#include "launchers/server_process.h"

using cachet::Item;
using cachet::redis::RedisBackend;
using cachet::redis::RedisMode;
using cachet::redis::RedisOptions;

namespace {

// A CLUSTER SHARDS reply (RESP2) giving every slot to 127.0.0.1:port.
std::string ShardsReply(int port) {
  auto bulk = [](const std::string& s) {
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
  };
  return "*1\r\n*4\r\n" + bulk("slots") + "*2\r\n:0\r\n:16383\r\n" + bulk("nodes") +
         "*1\r\n*12\r\n" + bulk("id") + bulk("fake") + bulk("port") + ":" + std::to_string(port) +
         "\r\n" + bulk("ip") + bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") +
         bulk("role") + bulk("master") + bulk("health") + bulk("online");
}

// A fake node: every request (one per read, as the client waits for each
// reply) is answered by `answer`, which sees the request's bytes. Serves until
// destroyed; each wait is a bounded poll.
class FakeNode {
 public:
  using Answer = std::function<std::string(const std::string& request)>;

  explicit FakeNode(Answer answer) : answer_(std::move(answer)) {
    listener_ = cachet::test::ListenOnLoopback(8, &port_);
    REQUIRE(listener_ >= 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeNode() {
    stop_ = true;
    thread_.join();
    for (const pollfd& p : fds_) close(p.fd);
  }
  int port() const { return port_; }

 private:
  void Serve() {
    fds_.push_back({listener_, POLLIN, 0});
    while (!stop_) {
      if (poll(fds_.data(), fds_.size(), 50) <= 0) continue;
      if (fds_[0].revents & POLLIN)
        fds_.push_back({accept(listener_, nullptr, nullptr), POLLIN, 0});
      for (std::size_t i = 1; i < fds_.size(); ++i) {
        if (!(fds_[i].revents & (POLLIN | POLLHUP))) continue;
        char buffer[4096];
        ssize_t n = read(fds_[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          fds_[i].events = 0;  // closed by the client: ignore from now on
          continue;
        }
        std::string reply = answer_(std::string(buffer, static_cast<std::size_t>(n)));
        [[maybe_unused]] ssize_t written = write(fds_[i].fd, reply.data(), reply.size());
      }
    }
  }

  Answer answer_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<pollfd> fds_;
  std::thread thread_;
};

std::unique_ptr<RedisBackend> ConnectTo(int port) {
  RedisOptions options;
  options.mode = RedisMode::kCluster;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port), 1});
  options.cluster.max_redirects = 5;
  options.cluster.retry_wait = std::chrono::milliseconds(1);
  return std::make_unique<RedisBackend>(std::move(options));
}

bool Has(const std::string& request, const char* word) {
  return request.find(word) != std::string::npos;
}

}  // namespace

TEST_CASE("TRYAGAIN and CLUSTERDOWN are retried until the node answers", "[redis][cluster]") {
  std::atomic<int> gets{0}, shards{0};
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) {
      ++shards;
      return ShardsReply(port);
    }
    int n = ++gets;
    if (n == 1) return "-TRYAGAIN Multiple keys request during rehashing of slot\r\n";
    if (n == 2) return "-CLUSTERDOWN The cluster is down\r\n";
    return "$2\r\nok\r\n";
  });
  port = node.port();
  auto backend = ConnectTo(port);
  Item item;
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "ok");
  CHECK(gets == 3);
  CHECK(shards == 1);
}

TEST_CASE("a cluster that stays down is unavailable after max_redirects attempts",
          "[redis][cluster]") {
  std::atomic<int> gets{0};
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(port);
    ++gets;
    return "-CLUSTERDOWN Hash slot not served\r\n";
  });
  port = node.port();
  auto backend = ConnectTo(port);
  Item item;
  cachet::Status s = backend->Get("k", &item);
  CHECK(s.IsUnavailable());
  CHECK(s.message().find("CLUSTERDOWN") != std::string_view::npos);
  CHECK(gets == 5);
}

TEST_CASE("a MOVED loop ends, and reloads of the slot map are rate limited", "[redis][cluster]") {
  std::atomic<int> gets{0}, shards{0};
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) {
      ++shards;
      return ShardsReply(port);
    }
    ++gets;
    // Always points back at itself: a broken cluster, or one mid-change.
    return "-MOVED 1 127.0.0.1:" + std::to_string(port) + "\r\n";
  });
  port = node.port();
  auto backend = ConnectTo(port);
  Item item;
  for (int call = 0; call < 10; ++call) CHECK(backend->Get("k", &item).IsUnavailable());
  CHECK(gets == 50);
  // One load at the start; the 50 MOVED replies asked for more, but within
  // refresh_interval (1 s by default) at most one more is made.
  CHECK(shards <= 2);
}

TEST_CASE("an older cluster without CLUSTER SHARDS is read with CLUSTER SLOTS",
          "[redis][cluster]") {
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return "-ERR unknown subcommand 'SHARDS'\r\n";
    if (Has(request, "SLOTS")) {
      return "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:" + std::to_string(port) +
             "\r\n";
    }
    return "$1\r\nv\r\n";
  });
  port = node.port();
  auto backend = ConnectTo(port);
  Item item;
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "v");
}
