// The memcached backend against real memcached processes, in both protocols:
// every command, batches over several servers, noreply, injections, faults.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "memcached_fixture.h"
#include "support/killed_server.h"

namespace cachet::memcached::test {
namespace {

using std::chrono::milliseconds;
using namespace std::string_literals;

Protocol AnyProtocol() { return GENERATE(Protocol::kText, Protocol::kMeta); }

std::string ProtocolName(Protocol p) { return p == Protocol::kMeta ? "meta" : "text"; }

Operation GetOp(std::string_view key) {
  Operation op;
  op.kind = OpKind::kGet;
  op.key = key;
  return op;
}

Operation SetOp(std::string_view key, std::string_view value, std::uint32_t flags = 0) {
  Operation op;
  op.kind = OpKind::kStore;
  op.key = key;
  op.item = ItemView(value, flags);
  return op;
}

std::vector<std::string> Keys(int count, const std::string& prefix = "key") {
  std::vector<std::string> keys;
  for (int i = 0; i < count; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

// One get per key, in order; the keys must outlive the operations.
std::vector<Operation> GetsFor(const std::vector<std::string>& keys) {
  std::vector<Operation> gets;
  for (const std::string& k : keys) gets.push_back(GetOp(k));
  return gets;
}

// `count` memcached servers started for this test, on free loopback ports.
std::vector<std::unique_ptr<ServerProcess>> RequireServers(std::size_t count) {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto servers = StartServers(static_cast<int>(count));
  REQUIRE(servers.size() == count);
  return servers;
}

MemcachedOptions WithIoTimeout(MemcachedOptions o, milliseconds io_timeout) {
  o.pool.connection.io_timeout = io_timeout;
  return o;
}

// A fault case: `count` servers, and a backend over them whose connections
// give up after `io_timeout` of silence.
struct FaultSetup {
  FaultSetup(std::size_t count, Protocol protocol, milliseconds io_timeout)
      : servers(RequireServers(count)),
        options(WithIoTimeout(OptionsFor(servers, protocol), io_timeout)),
        backend(options) {}

  // Stores `count` keys, each with itself as the value; returns them.
  std::vector<std::string> StoreKeys(int count) {
    std::vector<std::string> keys = Keys(count);
    for (const std::string& k : keys)
      REQUIRE(backend.Store(StoreMode::kSet, k, ItemView(k), {}).ok());
    return keys;
  }

  // Gets every key of `keys` in one batch; returns the operations, in order.
  std::vector<Operation> GetInOneBatch(const std::vector<std::string>& keys) {
    std::vector<Operation> gets = GetsFor(keys);
    backend.Execute(gets);
    return gets;
  }

  // Checks each operation of a batch by where its key lives: `on_failed` for
  // those on server `failed`, `on_live` for the others. Returns how many
  // lived on `failed`.
  template <class OnFailed, class OnLive>
  int CheckByServer(const std::vector<Operation>& ops, std::size_t failed, OnFailed on_failed,
                    OnLive on_live) const {
    auto dist = net::Distribution::Create(options.distribution, options.servers);
    int on_failed_server = 0;
    for (const Operation& op : ops) {
      INFO("key " << op.key);
      if (dist->ServerFor(op.key) == failed) {
        ++on_failed_server;
        on_failed(op);
      } else {
        on_live(op);
      }
    }
    return on_failed_server;
  }

  std::vector<std::unique_ptr<ServerProcess>> servers;
  MemcachedOptions options;
  MemcachedBackend backend;
};

}  // namespace

TEST_CASE("every single-key command", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  INFO(ProtocolName(protocol));
  auto servers = RequireServers(1);
  MemcachedBackend b(OptionsFor(servers, protocol));
  Item item;

  CHECK(b.Get("k", &item).IsNotFound());
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v1", 42), {}).ok());
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v1");
  CHECK(item.flags == 42);
  CHECK(item.cas != 0);

  CHECK(b.Store(StoreMode::kAdd, "k", ItemView("x"), {}).IsNotStored());
  CHECK(b.Store(StoreMode::kReplace, "absent", ItemView("x"), {}).IsNotStored());
  CHECK(b.Store(StoreMode::kReplace, "k", ItemView("v2", 42), {}).ok());
  CHECK(b.Store(StoreMode::kAppend, "k", ItemView(">"), {}).ok());
  CHECK(b.Store(StoreMode::kPrepend, "k", ItemView("<"), {}).ok());
  CHECK(b.Store(StoreMode::kAppend, "absent", ItemView(">"), {}).IsNotStored());
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "<v2>");

  std::uint64_t cas = item.cas;
  CHECK(b.Store(StoreMode::kCas, "k", ItemView("new", 1, cas), {}).ok());
  CHECK(b.Store(StoreMode::kCas, "k", ItemView("stale", 1, cas), {}).IsExists());
  CHECK(b.Store(StoreMode::kCas, "absent", ItemView("x", 0, cas), {}).IsNotFound());

  REQUIRE(b.Store(StoreMode::kSet, "n", ItemView("10"), {}).ok());
  std::uint64_t counter = 0;
  REQUIRE(b.Incr("n", 5, &counter).ok());
  CHECK(counter == 15);
  REQUIRE(b.Decr("n", 20, &counter).ok());
  CHECK(counter == 0);  // decr stops at 0
  CHECK(b.Incr("absent", 1, &counter).IsNotFound());
  CHECK(b.Incr("k", 1, &counter).IsInvalidArgument());  // not a number

  CHECK(b.Touch("k", milliseconds(60000)).ok());
  CHECK(b.Touch("absent", milliseconds(60000)).IsNotFound());
  REQUIRE(b.GetAndTouch("k", milliseconds(60000), &item).ok());
  CHECK(item.value == "new");
  CHECK(b.GetAndTouch("absent", milliseconds(1000), &item).IsNotFound());

  CHECK(b.Remove("k").ok());
  CHECK(b.Remove("k").IsNotFound());
  CHECK(b.Get("k", &item).IsNotFound());

  // The connection is still in step after all of that.
  REQUIRE(b.Store(StoreMode::kSet, "after", ItemView("ok"), {}).ok());
  REQUIRE(b.Get("after", &item).ok());
  CHECK(item.value == "ok");
}

TEST_CASE("meta single operations keep their connection, an error line drops it",
          "[memcached][backend]") {
  auto servers = RequireServers(1);
  MemcachedBackend b(OptionsFor(servers, Protocol::kMeta));
  // The connections the server has accepted so far (stats among them).
  auto accepted = [&b] {
    StatsMap stats;
    REQUIRE(b.Stats(&stats).ok());
    for (const auto& [name, value] : stats) {
      if (name.ends_with(" total_connections")) return std::stoi(value);
    }
    FAIL("no total_connections");
    return 0;
  };
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v", 3), {}).ok());
  const int before = accepted();
  Item item;
  const std::string big(300000, 'b');  // read straight into the item
  for (int round = 0; round < 3; ++round) {
    REQUIRE(b.Get("k", &item).ok());
    CHECK(item.value == "v");
    CHECK(item.flags == 3);
    CHECK(b.Get("absent", &item).IsNotFound());
    CHECK(b.Store(StoreMode::kAdd, "k", ItemView("x"), {}).IsNotStored());
    CHECK(b.Store(StoreMode::kAdd, "k", ItemView("x"), {Ttl(0), true}).IsNotStored());
    CHECK(b.Store(StoreMode::kSet, "n", ItemView("1"), {Ttl(0), true}).ok());
    std::uint64_t counter = 0;
    REQUIRE(b.Incr("n", 4, &counter).ok());
    CHECK(counter == 5);
    CHECK(b.Touch("absent", milliseconds(1000)).IsNotFound());
    REQUIRE(b.Store(StoreMode::kSet, "big", ItemView(big), {}).ok());
    REQUIRE(b.Get("big", &item).ok());
    CHECK(item.value == big);
    CHECK(b.Remove("absent").IsNotFound());
  }
  CHECK(accepted() == before);
  // memcached's CLIENT_ERROR carries no token: the connection is not trusted again.
  std::uint64_t counter = 0;
  CHECK(b.Incr("k", 1, &counter).IsInvalidArgument());
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v");
  CHECK(accepted() == before + 1);
}

TEST_CASE("a TTL expires items", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(1);
  MemcachedBackend b(OptionsFor(servers, protocol));
  // A negative TTL is refused before anything is sent.
  CHECK(b.Store(StoreMode::kSet, "gone", ItemView("v"), {Ttl(-1), false}).IsInvalidArgument());
  Item item;
  CHECK(b.Get("gone", &item).IsNotFound());
  REQUIRE(b.Store(StoreMode::kSet, "brief", ItemView("v"), {Ttl(1), false}).ok());
  REQUIRE(b.Store(StoreMode::kSet, "kept", ItemView("v"), {Ttl(3600 * 1000), false}).ok());
  CHECK(b.Get("kept", &item).ok());
  // memcached counts whole seconds: the 1 ms item is gone within about two.
  bool gone = false;
  for (int i = 0; i < 30 && !gone; ++i) {
    gone = b.Get("brief", &item).IsNotFound();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(gone);
}

TEST_CASE("batches fan out over three servers", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  INFO(ProtocolName(protocol));
  auto servers = RequireServers(3);
  MemcachedBackend b(OptionsFor(servers, protocol));
  auto keys = Keys(100);
  std::vector<Operation> sets;
  for (const std::string& k : keys) sets.push_back(SetOp(k, "value-" + k.substr(3)));
  // Values must outlive Execute: keep them in a vector.
  std::vector<std::string> values;
  for (const std::string& k : keys) values.push_back("value-" + k);
  for (std::size_t i = 0; i < keys.size(); ++i) sets[i].item = ItemView(values[i], 7);
  b.Execute(sets);
  for (const Operation& op : sets) CHECK(op.status.ok());

  std::vector<Operation> gets = GetsFor(keys);
  gets.push_back(GetOp("missing"));
  gets.push_back(GetOp(keys[3]));  // a duplicate
  b.Execute(gets);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(gets[i].status.ok());
    CHECK(gets[i].result.value == values[i]);
    CHECK(gets[i].result.flags == 7);
  }
  CHECK(gets[100].status.IsNotFound());
  CHECK(gets[101].result.value == values[3]);

  // Every server got a share.
  StatsMap stats;
  REQUIRE(b.Stats(&stats).ok());
  int servers_with_items = 0;
  for (const auto& [name, value] : stats) {
    if (name.ends_with(" curr_items") && value != "0") ++servers_with_items;
  }
  CHECK(servers_with_items == 3);

  std::vector<Operation> deletes;
  for (const std::string& k : keys) {
    Operation op;
    op.kind = OpKind::kRemove;
    op.key = k;
    deletes.push_back(op);
  }
  b.Execute(deletes);
  for (const Operation& op : deletes) CHECK(op.status.ok());
  Item item;
  CHECK(b.Get(keys[0], &item).IsNotFound());
}

TEST_CASE("a mixed batch keeps per-server order", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(2);
  MemcachedBackend b(OptionsFor(servers, protocol));
  std::vector<Operation> ops;
  ops.push_back(SetOp("a", "1"));
  ops.push_back(GetOp("a"));
  Operation incr;
  incr.kind = OpKind::kIncr;
  incr.key = "a";
  incr.delta = 4;
  ops.push_back(incr);
  ops.push_back(GetOp("a"));
  Operation touch;
  touch.kind = OpKind::kTouch;
  touch.key = "nothing";
  touch.ttl = milliseconds(1000);
  ops.push_back(touch);
  Operation bad = SetOp("bad key", "x");
  ops.push_back(bad);
  b.Execute(ops);
  CHECK(ops[0].status.ok());
  CHECK(ops[1].result.value == "1");
  CHECK(ops[2].counter == 5);
  CHECK(ops[3].result.value == "5");
  CHECK(ops[4].status.IsNotFound());
  CHECK(ops[5].status.IsInvalidArgument());
}

TEST_CASE("noreply: text loses errors, meta reports them", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(1);
  MemcachedBackend b(OptionsFor(servers, protocol));
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v"), {Ttl(0), true}).ok());
  Item item;
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v");
  Status add = b.Store(StoreMode::kAdd, "k", ItemView("w"), {Ttl(0), true});
  if (protocol == Protocol::kMeta) {
    CHECK(add.IsNotStored());
  } else {
    CHECK(add.ok());
  }
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("oversized values are refused before sending", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(1);
  MemcachedOptions o = OptionsFor(servers, protocol);
  o.max_item_size = 2 * 1024 * 1024;  // above the server's 1 MiB
  MemcachedBackend lenient(o);
  o.max_item_size = 1000;
  MemcachedBackend strict(o);
  Status s = strict.Store(StoreMode::kSet, "k", ItemView(std::string(1001, 'x')), {});
  CHECK(s.IsTooLarge());
  CHECK(s.message().find("max_item_size") != std::string_view::npos);
  // The server's own limit answers too_large as well, and the stream stays in step.
  std::string big(1048576, 'x');
  CHECK(lenient.Store(StoreMode::kSet, "k", ItemView(big), {}).IsTooLarge());
  std::string fits(1048516 - 100, 'y');
  REQUIRE(lenient.Store(StoreMode::kSet, "k2", ItemView(fits), {}).ok());
  Item item;
  REQUIRE(lenient.Get("k2", &item).ok());
  CHECK(item.value == fits);
}

TEST_CASE("injected keys and values never run as commands", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  INFO(ProtocolName(protocol));
  auto servers = RequireServers(1);
  MemcachedBackend b(OptionsFor(servers, protocol));
  REQUIRE(b.Store(StoreMode::kSet, "canary", ItemView("alive"), {}).ok());

  for (const std::string& key : {"x\r\nflush_all"s, "x flush_all"s, "x\nflush_all"s,
                                 std::string(251, 'k'), "x\0flush_all"s}) {
    CHECK(b.Store(StoreMode::kSet, key, ItemView("v"), {}).IsInvalidArgument());
    Item item;
    CHECK(b.Get(key, &item).IsInvalidArgument());
    CHECK(b.Remove(key).IsInvalidArgument());
  }
  // Values are data, whatever they contain, including a lying length line.
  std::vector<std::string> values = {"flush_all",
                                     "\r\nflush_all\r\n",
                                     "5\r\nflush_all\r\n",
                                     "x\r\nset canary 0 0 4\r\ndead\r\n",
                                     "END\r\n",
                                     "VALUE canary 0 4\r\ndead\r\nEND\r\n",
                                     "mn\r\nms canary 4\r\ndead\r\n"};
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string key = "v" + std::to_string(i);
    REQUIRE(b.Store(StoreMode::kSet, key, ItemView(values[i]), {}).ok());
    Item item;
    REQUIRE(b.Get(key, &item).ok());
    CHECK(item.value == values[i]);
  }
  Item canary;
  REQUIRE(b.Get("canary", &canary).ok());
  CHECK(canary.value == "alive");
}

TEST_CASE("binary keys on meta carry any bytes", "[memcached][backend]") {
  auto servers = RequireServers(1);
  MemcachedOptions o = OptionsFor(servers, Protocol::kMeta);
  o.binary_keys = true;
  MemcachedBackend b(o);
  REQUIRE(b.Store(StoreMode::kSet, "canary", ItemView("alive"), {}).ok());
  std::string key = "a b\r\nflush_all\r\n\0\xff"s;
  REQUIRE(b.Store(StoreMode::kSet, key, ItemView("bin"), {}).ok());
  Item item;
  REQUIRE(b.Get(key, &item).ok());
  CHECK(item.value == "bin");
  CHECK(b.Get("canary", &item).ok());
  CHECK(b.Get(std::string(187, 'k'), &item).IsInvalidArgument());
}

TEST_CASE("stats, version and flush reach every server", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(2);
  MemcachedBackend b(OptionsFor(servers, protocol));
  std::vector<std::string> versions;
  REQUIRE(b.Extension("version", {}, &versions).ok());
  REQUIRE(versions.size() == 2);
  CHECK(versions[0] == servers[0]->address() + " " + versions[0].substr(versions[0].find(' ') + 1));
  CHECK(versions[1].rfind(servers[1]->address() + " 1.", 0) == 0);
  StatsMap stats;
  REQUIRE(b.Stats(&stats).ok());
  int pids = 0;
  for (const auto& [name, value] : stats) {
    if (name == servers[0]->address() + " pid" || name == servers[1]->address() + " pid") ++pids;
  }
  CHECK(pids == 2);
  for (const std::string& k : Keys(20))
    REQUIRE(b.Store(StoreMode::kSet, k, ItemView("v"), {}).ok());
  REQUIRE(b.Flush().ok());
  Item item;
  for (const std::string& k : Keys(20)) CHECK(b.Get(k, &item).IsNotFound());
  std::vector<std::string> reply;
  CHECK(b.Extension("nonsense", {}, &reply).IsUnsupported());
}

TEST_CASE("threads share one backend", "[memcached][backend]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(2);
  MemcachedBackend b(OptionsFor(servers, protocol));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&b, &failures, t] {
      Item item;
      for (int i = 0; i < 200; ++i) {
        std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        std::string value = key + "-value";
        if (!b.Store(StoreMode::kSet, key, ItemView(value), {}).ok() || !b.Get(key, &item).ok() ||
            item.value != value) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures == 0);
}

TEST_CASE("fault: a server killed before a batch", "[memcached][faults]") {
  FaultSetup setup(3, AnyProtocol(), milliseconds(1000));
  const auto keys = setup.StoreKeys(60);
  // Warm connections to every server, then kill one: its keys fail, the rest succeed.
  REQUIRE(setup.servers[1]->Kill().ok());
  const std::vector<Operation> gets = setup.GetInOneBatch(keys);
  const int dead = setup.CheckByServer(
      gets, 1,
      [](const Operation& get) {
        CHECK(get.status.IsError());
        CHECK_FALSE(get.status.IsNotFound());
      },
      [](const Operation& get) {
        CHECK(get.status.ok());
        CHECK(get.result.value == get.key);
      });
  CHECK(dead > 0);
}

TEST_CASE("fault: a server killed in the middle of a batch", "[memcached][faults]") {
  FaultSetup setup(2, AnyProtocol(), milliseconds(3000));
  // Paused, server 0 accepts the batch into its socket but answers nothing; it
  // is killed while the batch waits, and server 1 answers meanwhile.
  cachet::test::KilledWhilePaused killer(*setup.servers[0], milliseconds(200));
  auto keys = Keys(40);
  std::string value(1000, 'v');
  std::vector<Operation> sets;
  for (const std::string& k : keys) sets.push_back(SetOp(k, value));
  setup.backend.Execute(sets);
  killer.Join();
  const int on_dead = setup.CheckByServer(
      sets, 0, [](const Operation& set) { CHECK(set.status.IsError()); },
      [](const Operation& set) { CHECK(set.status.ok()); });
  CHECK(on_dead > 0);
}

TEST_CASE("fault: a stalled server times out, others unaffected", "[memcached][faults]") {
  FaultSetup setup(2, AnyProtocol(), milliseconds(300));
  const auto keys = setup.StoreKeys(30);
  REQUIRE(setup.servers[0]->Pause().ok());
  const std::vector<Operation> gets = setup.GetInOneBatch(keys);
  const int stalled = setup.CheckByServer(
      gets, 0, [](const Operation& get) { CHECK(get.status.IsTimeout()); },
      [](const Operation& get) { CHECK(get.status.ok()); });
  CHECK(stalled > 0);
  REQUIRE(setup.servers[0]->Resume().ok());
}

TEST_CASE("fault: a restarted server is served again", "[memcached][faults]") {
  Protocol protocol = AnyProtocol();
  auto servers = RequireServers(1);
  MemcachedOptions o = OptionsFor(servers, protocol);
  o.pool.failure_limit = 1;
  o.pool.retry_timeout = milliseconds(0);
  MemcachedBackend b(o);
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(servers[0]->Kill().ok());
  Item item;
  Status down = b.Get("k", &item);
  CHECK(down.IsError());
  CHECK_FALSE(down.IsNotFound());
  REQUIRE(servers[0]->Restart().ok());
  // A restarted memcached is empty; what matters is that it answers again.
  Status back = b.Get("k", &item);
  for (int attempt = 0; attempt < 3 && back.IsError(); ++attempt) back = b.Get("k", &item);
  CHECK(back.IsNotFound());
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("again"), {}).ok());
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "again");
}

TEST_CASE("fault: a dead server is marked and skipped", "[memcached][faults]") {
  auto servers = RequireServers(2);
  MemcachedOptions o = OptionsFor(servers, Protocol::kMeta);
  o.pool.failure_limit = 2;
  o.pool.retry_timeout = milliseconds(60000);
  auto dist = net::Distribution::Create(o.distribution, o.servers);
  std::string on_zero, on_one;
  for (const std::string& k : Keys(50)) {
    (dist->ServerFor(k) == 0 ? on_zero : on_one) = k;
  }
  REQUIRE(!on_zero.empty());
  REQUIRE(!on_one.empty());
  SECTION("without failover its keys are unavailable") {
    MemcachedBackend b(o);
    REQUIRE(servers[0]->Kill().ok());
    Item item;
    CHECK(b.Get(on_zero, &item).IsError());
    CHECK(b.Get(on_zero, &item).IsError());
    Status marked = b.Get(on_zero, &item);
    CHECK(marked.IsUnavailable());
    CHECK(marked.message().find("marked dead") != std::string_view::npos);
    CHECK(b.Store(StoreMode::kSet, on_one, ItemView("v"), {}).ok());
  }
  SECTION("with failover its keys move to the live server") {
    o.pool.failover = true;
    MemcachedBackend b(o);
    REQUIRE(servers[0]->Kill().ok());
    Item item;
    (void)b.Get(on_zero, &item);
    (void)b.Get(on_zero, &item);
    REQUIRE(b.Store(StoreMode::kSet, on_zero, ItemView("moved"), {}).ok());
    REQUIRE(b.Get(on_zero, &item).ok());
    CHECK(item.value == "moved");
  }
}

}  // namespace cachet::memcached::test
