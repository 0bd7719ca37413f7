// ClusterRouter against fake cluster nodes on loopback ports: TRYAGAIN and
// CLUSTERDOWN are retried a bounded number of times, a slot map that cannot be
// loaded is an error, a MOVED loop ends, MOVED to another node updates the slot
// map (single calls and batches), ASK is followed once without changing it, and
// a call made inside a push hook is refused without a retry.
// The fakes answer commands from a script, so each path is taken exactly.
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

#include "cluster_slots.h"
#include "launchers/server_process.h"
#include "support/scripted_server.h"
#include "redis_backend.h"

using cachet::Item;
using cachet::redis::RedisBackend;
using cachet::redis::RedisMode;
using cachet::redis::RedisOptions;

namespace {

// One shard of a CLUSTER SHARDS reply (RESP2): slots first..last on 127.0.0.1:port.
std::string Shard(int port, int first, int last) {
  auto bulk = [](const std::string& s) {
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
  };
  return "*4\r\n" + bulk("slots") + "*2\r\n:" + std::to_string(first) + "\r\n:" +
         std::to_string(last) + "\r\n" + bulk("nodes") + "*1\r\n*12\r\n" + bulk("id") +
         bulk("fake" + std::to_string(port)) + bulk("port") + ":" + std::to_string(port) +
         "\r\n" + bulk("ip") + bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") +
         bulk("role") + bulk("master") + bulk("health") + bulk("online");
}

// A CLUSTER SHARDS reply (RESP2) giving every slot to 127.0.0.1:port.
std::string ShardsReply(int port) { return "*1\r\n" + Shard(port, 0, 16383); }

// A fake node: every request (one per read, as the client waits for each
// reply) is answered by `answer`, which sees the request's bytes, and the PING
// that closes a pipeline by PONG after that. What `late` gives for a request
// follows 50 ms later, the PONG then after it. Serves until destroyed; each
// wait is a bounded poll.
class FakeNode {
 public:
  using Answer = std::function<std::string(const std::string& request)>;

  explicit FakeNode(Answer answer, Answer late = {})
      : answer_(std::move(answer)), late_(std::move(late)) {
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
        const std::string request(buffer, static_cast<std::size_t>(n));
        std::string reply = answer_(request);
        std::string late = late_ ? late_(request) : std::string();
        (late.empty() ? reply : late) +=
            request.ends_with("*1\r\n$4\r\nPING\r\n") ? "+PONG\r\n" : "";
        [[maybe_unused]] ssize_t written = write(fds_[i].fd, reply.data(), reply.size());
        if (late.empty()) continue;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        written = write(fds_[i].fd, late.data(), late.size());
      }
    }
  }

  Answer answer_;
  Answer late_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<pollfd> fds_;
  std::thread thread_;
};

std::unique_ptr<RedisBackend> ConnectTo(
    int port, std::chrono::milliseconds refresh_interval = std::chrono::milliseconds(1000),
    std::chrono::milliseconds retry_wait = std::chrono::milliseconds(1)) {
  RedisOptions options;
  options.mode = RedisMode::kCluster;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port), 1});
  options.cluster.max_redirects = 5;
  options.cluster.retry_wait = retry_wait;
  options.cluster.refresh_interval = refresh_interval;
  return std::make_unique<RedisBackend>(std::move(options));
}

bool Has(const std::string& request, const char* word) {
  return request.find(word) != std::string::npos;
}

// How many GET commands a request (perhaps a pipeline) holds.
int GetsIn(const std::string& request) {
  int count = 0;
  for (std::size_t at = 0; (at = request.find("$3\r\nGET\r\n", at)) != std::string::npos; ++at) {
    ++count;
  }
  return count;
}

// `reply` once for each GET in `request`.
std::string Each(const std::string& request, const std::string& reply) {
  std::string replies;
  for (int i = GetsIn(request); i > 0; --i) replies += reply;
  return replies;
}

// Keys of one slot, that of "k" (a hash tag names the slot).
const std::uint16_t kSlot = cachet::redis::KeySlot("k");

// What the MOVED fakes were asked: GETs at A, GETs at B, slot map loads.
struct MovedCounts {
  std::atomic<int> a_gets{0};
  std::atomic<int> b_gets{0};
  std::atomic<int> shards{0};
};

// Node A, whose map gives it every slot and never changes, answers every GET
// with MOVED (slot kSlot) to node B, which answers "b".
struct MovedToB {
  MovedCounts counts;
  FakeNode b{[this](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(b.port());
    counts.b_gets += GetsIn(request);
    return Each(request, "$1\r\nb\r\n");
  }};
  FakeNode a{[this](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) {
      ++counts.shards;
      return ShardsReply(a.port());
    }
    counts.a_gets += GetsIn(request);
    return Each(request, "-MOVED " + std::to_string(kSlot) +
                             " 127.0.0.1:" + std::to_string(b.port()) + "\r\n");
  }};
};

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

TEST_CASE("a cluster call inside a push hook is refused at once: not retried, nothing sent",
          "[redis][cluster]") {
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  std::atomic<int> gets{0}, shards{0}, hellos{0};
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "HELLO")) {
      ++hellos;  // one per connection
      return "%1\r\n$5\r\nproto\r\n:3\r\n";
    }
    if (Has(request, "SHARDS")) {
      ++shards;
      return ShardsReply(port);
    }
    gets += GetsIn(request);
    // A push before the reply: the hook runs in the middle of this call.
    return ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nx\r\n" + Each(request, "$1\r\nv\r\n");
  });
  port = node.port();
  RedisBackend* store = nullptr;  // set once the store exists, before any call
  std::vector<cachet::Status> nested;
  RedisOptions options;
  options.mode = RedisMode::kCluster;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port.load()), 1});
  options.cluster.max_redirects = 5;
  options.cluster.retry_wait = std::chrono::milliseconds(1);
  options.session.resp = 3;
  options.session.on_push = [&](cachet::redis::RespValue, std::string_view) {
    Item inner;
    nested.push_back(store->Get("q", &inner));
  };
  auto backend = std::make_unique<RedisBackend>(std::move(options));
  store = backend.get();
  Item item;
  cachet::Status s = backend->Get("k", &item);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(item.value == "v");
  REQUIRE(nested.size() == 1);
  INFO(nested[0].ToString());
  // Refused as a misuse, not taken for an unreachable node and tried again.
  CHECK(nested[0].IsInvalidArgument());
  CHECK(nested[0].message().find("push hook") != std::string_view::npos);
  CHECK(nested[0].message().find("attempts") == std::string_view::npos);
  CHECK(gets == 1);
  CHECK(shards == 1);
  CHECK(hellos == 1);  // the refused call leased no connection of its own
}

TEST_CASE("a malformed redirection is a protocol error and so is a bare one", "[redis][cluster]") {
  for (const char* reply : {"-MOVED\r\n", "-ASK\r\n", "-MOVED 12\r\n", "-ASK x h:1\r\n"}) {
    std::atomic<int> port{0};  // set once the fake listens, read by its thread
    FakeNode node([&](const std::string& request) -> std::string {
      if (Has(request, "SHARDS")) return ShardsReply(port);
      return Each(request, reply);
    });
    port = node.port();
    auto backend = ConnectTo(node.port());
    Item item;
    cachet::Status single = backend->Get("k", &item);
    INFO(reply << single.ToString());
    CHECK(single.IsProtocolError());
    std::vector<cachet::Operation> batch(2);
    batch[0].key = "k";
    batch[1].key = "{k}2";
    backend->Execute(batch);
    for (const cachet::Operation& op : batch) CHECK(op.status.IsProtocolError());
  }
}

TEST_CASE("a slot map no node sends readably is a protocol error naming the node at once",
          "[redis][cluster]") {
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS") || Has(request, "SLOTS")) return "*1\r\n:5\r\n";
    return Each(request, "$1\r\nv\r\n");
  });
  auto backend = ConnectTo(node.port());
  Item item;
  cachet::Status s = backend->Get("k", &item);
  INFO(s.ToString());
  CHECK(s.IsProtocolError());
  CHECK(s.message().find("127.0.0.1:" + std::to_string(node.port())) != std::string_view::npos);
  CHECK(s.message().find("slot map") != std::string_view::npos);
  std::vector<cachet::Operation> batch(2);
  batch[0].key = "k";
  batch[1].key = "other";
  backend->Execute(batch);
  for (const cachet::Operation& op : batch) {
    INFO(op.status.ToString());
    CHECK(op.status.IsProtocolError());
  }
}

TEST_CASE("MOVED to another node updates the slot map without a reload", "[redis][cluster]") {
  // Node A's map gives it every slot and never changes; A answers MOVED to B
  // for slot kSlot. The map is not reloaded (refresh_interval 60 s), so only
  // the MOVED reply can send the next call straight to B.
  MovedToB nodes;
  auto& [a_gets, b_gets, shards] = nodes.counts;
  auto backend = ConnectTo(nodes.a.port(), std::chrono::milliseconds(60000));
  Item item;
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "b");
  CHECK(a_gets == 1);
  CHECK(b_gets == 1);
  item = Item();
  REQUIRE(backend->Get("{k}again", &item).ok());  // the same slot: straight to B
  CHECK(item.value == "b");
  CHECK(a_gets == 1);
  CHECK(b_gets == 2);
  CHECK(shards == 1);
}

TEST_CASE("a batch answered MOVED is sent again to the new node, which the map keeps",
          "[redis][cluster]") {
  MovedToB nodes;
  auto& [a_gets, b_gets, shards] = nodes.counts;
  auto backend = ConnectTo(nodes.a.port(), std::chrono::milliseconds(60000));
  const std::vector<std::string> keys = {"{k}0", "{k}1"};
  std::vector<cachet::Operation> ops(keys.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ops[i].kind = cachet::OpKind::kGet;
    ops[i].key = keys[i];
  }
  backend->Execute(ops);  // one pipeline of GETs per node
  for (const cachet::Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.ok());
    CHECK(op.result.value == "b");
  }
  CHECK(a_gets == 2);  // the first round, answered MOVED
  CHECK(b_gets == 2);  // the second round, at the new node
  // The map kept the move: a single call goes straight to B.
  Item item;
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(a_gets == 2);
  CHECK(b_gets == 3);
  CHECK(shards == 1);
}

// ASKING and its command are a pipeline: B's OK to ASKING sent twice would
// answer the add, and the add's own nil would come late, as the answer to the
// connection's next command. The PING after them catches it.
TEST_CASE("an ASKING reply sent twice answers no command", "[redis][cluster][stream]") {
  std::atomic<int> a_port{0}, b_port{0};
  FakeNode b(
      [&](const std::string& request) -> std::string {
        if (Has(request, "SHARDS")) return ShardsReply(a_port);
        return Has(request, "ASKING") ? "+OK\r\n+OK\r\n" : "$-1\r\n";
      },
      [&](const std::string& request) -> std::string {
        return Has(request, "ASKING") ? "$-1\r\n" : "";
      });
  b_port = b.port();
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(a_port);
    return "-ASK " + std::to_string(kSlot) + " 127.0.0.1:" + std::to_string(b_port.load()) +
           "\r\n";
  });
  a_port = a.port();
  auto backend = ConnectTo(a_port, std::chrono::milliseconds(60000));
  const cachet::Status add =
      backend->Store(cachet::StoreMode::kAdd, "k", cachet::ItemView("v"), {});
  INFO(add.ToString());
  CHECK(add.IsProtocolError());  // the nil where PONG belongs, or the PONG after it
}

TEST_CASE("ASK is followed with ASKING once, and the slot map stays", "[redis][cluster]") {
  // A owns the slot but is migrating it: it answers ASK to B. B serves the key
  // only after ASKING (as a node importing the slot does), else MOVED to A.
  std::atomic<int> a_gets{0}, b_asked{0}, b_plain{0};
  std::atomic<int> a_port{0}, b_port{0};
  FakeNode b([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(a_port);
    if (Has(request, "ASKING")) {
      ++b_asked;
      return "+OK\r\n$1\r\nb\r\n";
    }
    ++b_plain;
    return "-MOVED " + std::to_string(kSlot) + " 127.0.0.1:" + std::to_string(a_port.load()) +
           "\r\n";
  });
  b_port = b.port();
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(a_port);
    a_gets += GetsIn(request);
    return Each(request, "-ASK " + std::to_string(kSlot) +
                             " 127.0.0.1:" + std::to_string(b_port.load()) + "\r\n");
  });
  a_port = a.port();
  auto backend = ConnectTo(a_port, std::chrono::milliseconds(60000));
  for (int call = 1; call <= 2; ++call) {
    Item item;
    REQUIRE(backend->Get("k", &item).ok());
    CHECK(item.value == "b");
    CHECK(a_gets == call);  // each call asks A first: ASK changed no map
    CHECK(b_asked == call);
  }
  // A batch's ASK is followed the same way, one operation at a time.
  const std::vector<std::string> keys = {"{k}0", "{k}1"};
  std::vector<cachet::Operation> ops(keys.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ops[i].kind = cachet::OpKind::kGet;
    ops[i].key = keys[i];
  }
  backend->Execute(ops);
  for (const cachet::Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.ok());
    CHECK(op.result.value == "b");
  }
  CHECK(b_asked == 4);
  CHECK(b_plain == 0);  // never asked without ASKING
}

namespace {

// A seed node that serves no keys: its slot map gives every slot to
// `named_port`, and it counts the loads.
struct MapOnlySeed {
  explicit MapOnlySeed(int port) : named_port(port) {}
  const int named_port;
  std::atomic<int> shards{0};
  FakeNode node{[this](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) {
      ++shards;
      return ShardsReply(named_port);
    }
    return "-ERR the seed serves no keys\r\n";
  }};
};

// The operations borrow the keys: `keys` must outlive them (never a temporary).
std::vector<cachet::Operation> GetsOf(std::vector<std::string>&& keys) = delete;
std::vector<cachet::Operation> GetsOf(const std::vector<std::string>& keys) {
  std::vector<cachet::Operation> ops(keys.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ops[i].kind = cachet::OpKind::kGet;
    ops[i].key = keys[i];
  }
  return ops;
}

}  // namespace

TEST_CASE("a batch whose node refuses the connect goes again to the node the reloaded map names",
          "[redis][cluster]") {
  // The first slot map names a node nobody listens on (a primary that died);
  // the map loaded after the refused connect names the seed node. Nothing was
  // sent to the dead node, so the batch may go again, and every key is read.
  const cachet::test::RefusingPort refusing;
  const int dead = refusing.port();
  REQUIRE(dead != 0);
  std::atomic<int> gets{0}, shards{0};
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  FakeNode seed([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(++shards == 1 ? dead : port.load());
    gets += GetsIn(request);
    return Each(request, "$1\r\ns\r\n");
  });
  port = seed.port();
  // Reloads not rate limited; the round after the refused connect waits 100 ms first.
  auto backend = ConnectTo(port, std::chrono::milliseconds(0), std::chrono::milliseconds(100));
  const std::vector<std::string> keys = {"{k}0", "{k}1", "other"};
  std::vector<cachet::Operation> ops = GetsOf(keys);
  const auto started = std::chrono::steady_clock::now();
  backend->Execute(ops);
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(100));
  for (const cachet::Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.ok());
    CHECK(op.result.value == "s");
  }
  CHECK(gets == 3);    // one round at the live node
  CHECK(shards == 2);  // the first map, and the reload after the refused connect
}

TEST_CASE("a batch whose keys are retried one by one ends by its request timeout in all",
          "[redis][cluster]") {
  std::atomic<int> gets{0};
  std::atomic<int> port{0};  // set once the fake listens, read by its thread
  FakeNode node([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(port);
    std::string replies;
    for (int i = GetsIn(request); i > 0; --i, ++gets) {
      replies += "-CLUSTERDOWN The cluster is down\r\n";
    }
    return replies;
  });
  port = node.port();
  RedisOptions options;
  options.mode = RedisMode::kCluster;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port.load()), 1});
  options.cluster.max_redirects = 1000;  // the time, not the count, ends each retry
  options.cluster.retry_wait = std::chrono::milliseconds(20);
  options.pool.connection.request_timeout = std::chrono::milliseconds(500);
  RedisBackend backend(std::move(options));
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back("down" + std::to_string(i));
  std::vector<cachet::Operation> ops = GetsOf(keys);
  const auto started = std::chrono::steady_clock::now();
  backend.Execute(ops);  // CLUSTERDOWN for each: retried one by one
  const auto took = std::chrono::steady_clock::now() - started;
  for (const cachet::Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.IsTimeout());
    CHECK(op.status.message().find("CLUSTERDOWN") != std::string_view::npos);
  }
  CHECK(gets > 8);  // retried
  // One request timeout and a loaded machine's slack, not one per key (4 s).
  INFO("took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took < std::chrono::milliseconds(2000));
}

TEST_CASE("a batch whose node stays unreachable gives up after max_redirects rounds",
          "[redis][cluster]") {
  const cachet::test::RefusingPort dead;
  REQUIRE(dead.port() != 0);
  MapOnlySeed seed(dead.port());  // the map keeps naming a dead node
  auto backend = ConnectTo(seed.node.port(), std::chrono::milliseconds(0));
  const std::vector<std::string> keys = {"{k}0", "{k}1"};
  std::vector<cachet::Operation> ops = GetsOf(keys);
  backend->Execute(ops);
  for (const cachet::Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.IsUnavailable());  // never a miss
    CHECK(op.status.message().find("gave up after 5 attempts") != std::string_view::npos);
  }
  CHECK(seed.shards == 1 + 5);  // the first load, and one reload per refused round
}

namespace {

// A CLUSTER SHARDS reply (RESP2) giving slots 0-8191 to 127.0.0.1:low and
// 8192-16383 to 127.0.0.1:high: two primaries.
std::string TwoShardsReply(int low, int high) {
  auto bulk = [](const std::string& s) {
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
  };
  auto shard = [&](int first, int last, int port) {
    return "*4\r\n" + bulk("slots") + "*2\r\n:" + std::to_string(first) + "\r\n:" +
           std::to_string(last) + "\r\n" + bulk("nodes") + "*1\r\n*12\r\n" + bulk("id") +
           bulk("node" + std::to_string(port)) + bulk("port") + ":" + std::to_string(port) +
           "\r\n" + bulk("ip") + bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") +
           bulk("role") + bulk("master") + bulk("health") + bulk("online");
  };
  return "*2\r\n" + shard(0, 8191, low) + shard(8192, 16383, high);
}

}  // namespace

TEST_CASE("cluster stats and flush with a silent primary: one timeout, the live answer, a reload",
          "[redis][cluster]") {
  // Primary B answers the slot map but nothing else: a stalled node. A's
  // answer is read; the call ends once, by the request timeout, not per node,
  // and the failure reloads the slot map (B may have failed over).
  std::atomic<int> a_port{0}, b_port{0};
  std::atomic<int> a_info{0}, a_flush{0}, b_asked{0}, shards{0};
  auto map = [&] { return TwoShardsReply(a_port, b_port); };
  FakeNode b([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) {
      ++shards;  // a reload asks the primaries first, B among them
      return map();
    }
    ++b_asked;
    return "";  // silence
  });
  b_port = b.port();
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) {
      ++shards;
      return map();
    }
    if (Has(request, "INFO")) {
      ++a_info;
      const std::string info = "# Server\r\nredis_version:7.0\r\n";
      return "$" + std::to_string(info.size()) + "\r\n" + info + "\r\n";
    }
    if (Has(request, "FLUSHDB")) {
      ++a_flush;
      return "+OK\r\n";
    }
    return "-ERR unexpected\r\n";
  });
  a_port = a.port();
  RedisOptions options;
  options.mode = RedisMode::kCluster;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(a_port.load()), 1});
  options.cluster.refresh_interval = std::chrono::milliseconds(0);
  // B's silence ends its exchange after io_timeout, leaving time in the call
  // (request_timeout, three times io_timeout as by default) to reload the map.
  options.pool.connection.io_timeout = std::chrono::milliseconds(300);
  options.pool.connection.request_timeout = std::chrono::milliseconds(900);
  options.pool.failure_limit = 5;  // B is asked by both calls, not put to rest
  RedisBackend backend(std::move(options));
  // The first load, by a get A refuses (a key of one of A's slots).
  std::string on_a = "a";
  for (int i = 0; i < 100 && cachet::redis::KeySlot(on_a) > 8191; ++i) on_a = "a" + std::to_string(i);
  REQUIRE(cachet::redis::KeySlot(on_a) <= 8191);
  Item item;
  CHECK_FALSE(backend.Get(on_a, &item).ok());
  REQUIRE(shards == 1);
  for (const bool flush : {false, true}) {
    INFO((flush ? "flush" : "stats"));
    const int loads = shards;
    cachet::StatsMap stats;
    const auto started = std::chrono::steady_clock::now();
    const cachet::Status s = flush ? backend.Flush() : backend.Stats(&stats);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    INFO(s.ToString() << ", after " << took.count() << " ms");
    CHECK(s.IsTimeout());
    CHECK(s.message().find(std::to_string(b_port.load())) != std::string_view::npos);
    // B's 300 ms and a slot map reload, within the 900 ms request timeout, and
    // half a second of a loaded machine's slack.
    CHECK(took < std::chrono::milliseconds(1400));
    CHECK(shards > loads);  // the failure reloaded the map (B may have failed over)
    if (!flush) {
      const std::string a_prefix = "127.0.0.1:" + std::to_string(a_port.load()) + " ";
      bool a_seen = false;
      for (const auto& [name, value] : stats) {
        CHECK(name.rfind("127.0.0.1:" + std::to_string(b_port.load()), 0) != 0);  // none of B's
        a_seen = a_seen || name == a_prefix + "redis_version";
      }
      CHECK(a_seen);
    }
  }
  CHECK(a_info == 1);
  CHECK(a_flush == 1);
  CHECK(b_asked == 2);
}

TEST_CASE("a batch whose request went out before its node hung up is not sent again",
          "[redis][cluster]") {
  // The node reads the batch and hangs up without a reply: the commands may
  // have run (an incr must not count twice), so the batch fails as it is.
  cachet::test::ScriptedServer node(cachet::test::RespRequests(), {{"", 0, {}, {}, {}, true}});
  REQUIRE(node.port() > 0);
  MapOnlySeed seed(node.port());
  auto backend = ConnectTo(seed.node.port(), std::chrono::milliseconds(0));
  const std::vector<std::string> keys = {"{k}0", "{k}1"};
  std::vector<cachet::Operation> ops = GetsOf(keys);
  backend->Execute(ops);
  for (const cachet::Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.IsIoError());
  }
  CHECK(node.connections() == 1);  // asked once, never again
  CHECK(seed.shards == 2);  // the first load, and the reload after the failure
}

namespace {

// A node that takes every SET it is sent (counting them), its map naming itself.
struct CountingSets {
  std::atomic<int> sets{0};
  std::atomic<int> port{0};
  FakeNode node{[this](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(port);
    std::string replies;
    for (std::size_t at = 0; (at = request.find("$3\r\nSET\r\n", at)) != std::string::npos; ++at) {
      ++sets;
      replies += "+OK\r\n";
    }
    return replies;
  }};
  CountingSets() { port = node.port(); }
};

// A batch of two SETs of "k", to "v1" then "v2".
std::vector<cachet::Operation> TwoSetsOfK() {
  static const std::string values[2] = {"v1", "v2"};
  std::vector<cachet::Operation> ops(2);
  for (int i = 0; i < 2; ++i) {
    ops[i].kind = cachet::OpKind::kStore;
    ops[i].mode = cachet::StoreMode::kSet;
    ops[i].key = "k";
    ops[i].item = cachet::ItemView(values[i]);
  }
  return ops;
}

}  // namespace

TEST_CASE("a batch's writes to a key keep their order when one is answered ASK, the next MOVED",
          "[redis][cluster]") {
  // A's map gives it every slot. The slot's migration to B ends between the
  // batch's two SETs of "k": the first is answered ASK, the second MOVED. B
  // takes both; the first must still be applied first.
  std::mutex mutex;
  std::vector<std::string> applied;  // at B, in order
  std::atomic<int> b_port{0};
  FakeNode b([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(b_port);
    std::string replies;
    std::lock_guard lock(mutex);
    for (std::size_t at = 0; (at = request.find("\r\nv", at)) != std::string::npos; ++at) {
      applied.push_back(request.substr(at + 2, 2));
    }
    for (std::size_t at = 0; (at = request.find("*", at)) != std::string::npos; ++at) {
      replies += "+OK\r\n";  // ASKING and SET alike
    }
    return replies;
  });
  b_port = b.port();
  std::atomic<int> a_sets{0};
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(0);  // replaced below: A's own port
    const std::string where = std::to_string(kSlot) + " 127.0.0.1:" + std::to_string(b_port);
    std::string replies;
    for (std::size_t at = 0; (at = request.find("$3\r\nSET\r\n", at)) != std::string::npos; ++at) {
      replies += (a_sets++ == 0 ? "-ASK " : "-MOVED ") + where + "\r\n";
    }
    return replies;
  });
  // A seed whose map names A for every slot.
  FakeNode seed([&](const std::string& request) -> std::string {
    return Has(request, "SHARDS") ? ShardsReply(a.port()) : "-ERR not here\r\n";
  });
  auto backend = ConnectTo(seed.port(), std::chrono::milliseconds(60000));
  std::vector<cachet::Operation> ops = TwoSetsOfK();
  backend->Execute(ops);
  for (const cachet::Operation& op : ops) {
    INFO(op.status.ToString());
    CHECK(op.status.ok());
  }
  std::lock_guard lock(mutex);
  CHECK(applied == std::vector<std::string>{"v1", "v2"});
}

TEST_CASE("a batch's write answered MOVED is not sent again after a later write or a short end",
          "[redis][cluster]") {
  // A answers the batch's first SET of "k" MOVED (to B, the slot's owner until
  // then). Then either the slot's migration to A ends and A applies the second
  // (not sent again, the first would land after it), or A skips its reply: the
  // PONG that closes the batch comes where it belongs, so no reply of the
  // exchange is paired with its command, the MOVED neither (it could be the
  // answer to another), and nothing goes to B.
  const bool second_runs = GENERATE(true, false);
  CountingSets b;
  const int b_port = b.port;
  std::atomic<int> a_sets{0};
  std::atomic<int> a_port{0};
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(a_port);
    const std::string where = std::to_string(kSlot) + " 127.0.0.1:" + std::to_string(b_port);
    std::string replies;
    for (std::size_t at = 0; (at = request.find("$3\r\nSET\r\n", at)) != std::string::npos; ++at) {
      if (a_sets++ == 0) {
        replies += "-MOVED " + where + "\r\n";
      } else if (second_runs) {
        replies += "+OK\r\n";
      }
    }
    return replies;
  });
  a_port = a.port();
  FakeNode seed([&](const std::string& request) -> std::string {
    return Has(request, "SHARDS") ? ShardsReply(a.port()) : "-ERR not here\r\n";
  });
  auto backend = ConnectTo(seed.port(), std::chrono::milliseconds(60000));
  std::vector<cachet::Operation> ops = TwoSetsOfK();
  backend->Execute(ops);
  INFO(ops[0].status.ToString() << " / " << ops[1].status.ToString());
  if (second_runs) {
    CHECK(ops[0].status.IsUnavailable());
    CHECK(ops[0].status.message().find("changed hands") != std::string::npos);
    CHECK(ops[1].status.ok());
    CHECK(b.sets == 0);  // the first SET was not sent again
  } else {
    CHECK(ops[0].status.IsProtocolError());
    CHECK(ops[1].status.IsProtocolError());  // no reply: it may have been applied
    CHECK(b.sets == 0);
  }
}

TEST_CASE("a reload from a node behind the cluster does not undo a MOVED just heard",
          "[redis][cluster]") {
  // Every node's map still gives A every slot; A answers MOVED to B, which
  // serves. Reloads are not rate limited (refresh_interval 0): each MOVED
  // reloads, and the old map read must not send the next attempt back to A.
  std::atomic<int> a_gets{0}, b_gets{0};
  std::atomic<int> a_port{0};
  FakeNode b([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(a_port);
    b_gets += GetsIn(request);
    return Each(request, "$1\r\nb\r\n");
  });
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return ShardsReply(a_port);
    a_gets += GetsIn(request);
    return Each(request, "-MOVED " + std::to_string(kSlot) + " 127.0.0.1:" +
                             std::to_string(b.port()) + "\r\n");
  });
  a_port = a.port();
  auto backend = ConnectTo(a.port(), std::chrono::milliseconds(0));
  Item item;
  const cachet::Status got = backend->Get("k", &item);
  INFO(got.ToString());
  REQUIRE(got.ok());
  CHECK(item.value == "b");
  CHECK(a_gets == 1);
  CHECK(b_gets == 1);
  item = Item();
  REQUIRE(backend->Get("k", &item).ok());  // still B's, though the map was reloaded
  CHECK(a_gets == 1);
  CHECK(b_gets == 2);
}

TEST_CASE("a flush reaches a primary added since the slot map was loaded", "[redis][cluster]") {
  // A served every slot; then half of them moved to a new node, B. A flush
  // must reach B too, though no command of this client met a MOVED.
  std::atomic<bool> resharded{false};
  std::atomic<int> a_port{0}, b_port{0}, a_flushes{0}, b_flushes{0};
  auto map = [&] {
    return resharded ? "*2\r\n" + Shard(a_port, 0, 8191) + Shard(b_port, 8192, 16383)
                     : ShardsReply(a_port);
  };
  FakeNode b([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return map();
    if (Has(request, "FLUSHDB")) ++b_flushes;
    return "+OK\r\n";
  });
  FakeNode a([&](const std::string& request) -> std::string {
    if (Has(request, "SHARDS")) return map();
    if (Has(request, "FLUSHDB")) ++a_flushes;
    return Has(request, "GET") ? Each(request, "$-1\r\n") : "+OK\r\n";
  });
  a_port = a.port();
  b_port = b.port();
  auto backend = ConnectTo(a.port(), std::chrono::milliseconds(0));
  Item item;
  REQUIRE(backend->Get("k", &item).IsNotFound());  // the map is loaded: A alone
  resharded = true;
  const cachet::Status flushed = backend->Flush();
  INFO(flushed.ToString());
  CHECK(flushed.ok());
  CHECK(a_flushes == 1);
  CHECK(b_flushes == 1);
}
