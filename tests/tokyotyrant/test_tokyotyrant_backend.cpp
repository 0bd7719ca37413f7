// The Tokyo Tyrant backend against cachet-ttserver processes: the operation
// mapping, batches over a ring, the extension commands, and faults (a server that
// dies, stalls, comes back, or answers bytes that do not frame).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "cachet/envelope.h"
#include "cachet/net/connection.h"
#include "cachet/net/distribution.h"
#include "support/allocation_hooks.h"
#include "tt_backend.h"
#include "tt_fixture.h"

namespace cachet::tokyotyrant {
namespace {

// The longest a server may stay silent within a call, in these tests.
constexpr std::chrono::milliseconds kIoTimeout(2000);

Operation GetOp(std::string_view key) {
  Operation op;
  op.kind = OpKind::kGet;
  op.key = key;
  return op;
}

Operation SetOp(std::string_view key, std::string_view value, bool noreply = false) {
  Operation op;
  op.kind = OpKind::kStore;
  op.key = key;
  op.item = ItemView(value);
  op.noreply = noreply;
  return op;
}

std::string Rnum(TokyoTyrantBackend& b) {
  std::vector<std::string> reply;
  REQUIRE(b.Extension("rnum", {}, &reply).ok());
  REQUIRE(reply.size() == 1);
  return reply[0];
}

}  // namespace

TEST_CASE("tt backend: set, add, get, remove map to put, putkeep, get, out",
          "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantBackend b(OptionsFor(servers, kIoTimeout));
  Item item;
  CHECK(b.Get("k", &item).IsNotFound());
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v1"), {}).ok());
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v1");
  CHECK(b.Store(StoreMode::kAdd, "k", ItemView("x"), {}).IsNotStored());
  CHECK(b.Store(StoreMode::kAdd, "fresh", ItemView("y"), {}).ok());
  CHECK(b.Remove("k").ok());
  CHECK(b.Remove("k").IsNotFound());
  CHECK(b.Get("k", &item).IsNotFound());
  const std::string binary("a\0b\r\n\xff", 6);
  REQUIRE(b.Store(StoreMode::kSet, binary, ItemView(binary), {}).ok());
  REQUIRE(b.Get(binary, &item).ok());
  CHECK(item.value == binary);
}

TEST_CASE("tt backend: noreply set is putnr and a following get sees it",
          "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantBackend b(OptionsFor(servers, kIoTimeout));
  WriteOptions noreply;
  noreply.noreply = true;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(b.Store(StoreMode::kSet, "n" + std::to_string(i), ItemView("v"), noreply).ok());
  }
  Item item;
  REQUIRE(b.Get("n49", &item).ok());  // same pooled connection: in order after the putnrs
  CHECK(item.value == "v");
  CHECK(Rnum(b) == "50");
}

TEST_CASE("tt backend: replace, prepend, cas and touch are unsupported", "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantBackend b(OptionsFor(servers, kIoTimeout));
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  CHECK(b.Store(StoreMode::kReplace, "k", ItemView("x"), {}).IsUnsupported());
  CHECK(b.Store(StoreMode::kPrepend, "k", ItemView("x"), {}).IsUnsupported());
  CHECK(b.Store(StoreMode::kCas, "k", ItemView("x", 0, 1), {}).IsUnsupported());
  CHECK(b.Store(StoreMode::kAppend, "k", ItemView("x"), {}).IsUnsupported());
  CHECK(b.Touch("k", Ttl{1000}).IsUnsupported());
  std::uint64_t counter = 0;
  CHECK(b.Incr("k", 1, &counter).IsUnsupported());
  CHECK_FALSE(b.capabilities().has(Capability::kCounters));
  CHECK_FALSE(b.capabilities().has(Capability::kNativeTtl));
  CHECK_FALSE(b.capabilities().has(Capability::kNativeFlags));
  Item item;
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("tt backend: putcat_append makes append putcat", "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.putcat_append = true;
  TokyoTyrantBackend b(o);
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("ab"), {}).ok());
  REQUIRE(b.Store(StoreMode::kAppend, "k", ItemView("cd"), {}).ok());
  CHECK(b.Store(StoreMode::kAppend, "new", ItemView("x"), {}).ok());  // putcat creates
  Item item;
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "abcd");
  REQUIRE(b.Get("new", &item).ok());
  CHECK(item.value == "x");
}

TEST_CASE("tt backend: addint counters are 4-byte binary, signed 32-bit",
          "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.addint_counters = true;
  TokyoTyrantBackend b(o);
  CHECK(b.capabilities().has(Capability::kCounters));
  std::uint64_t v = 0;
  REQUIRE(b.Incr("c", 5, &v).ok());  // addint creates a missing counter
  CHECK(v == 5);
  REQUIRE(b.Decr("c", 2, &v).ok());
  CHECK(v == 3);
  Item item;
  REQUIRE(b.Get("c", &item).ok());
  REQUIRE(item.value.size() == 4);
  std::int32_t host = 0;
  std::memcpy(&host, item.value.data(), 4);
  CHECK(host == 3);
  REQUIRE(b.Decr("c", 10, &v).ok());
  CHECK(static_cast<std::int64_t>(v) == -7);  // no floor at 0: two's complement
  // Unsupported: invalid_argument would send the envelope looking for a value to count.
  CHECK(b.Incr("c", 1ull << 31, &v).IsUnsupported());
  REQUIRE(b.Store(StoreMode::kSet, "text", ItemView("12"), {}).ok());
  CHECK(b.Incr("text", 1, &v).IsInvalidArgument());
}

TEST_CASE("tt backend: a batch of gets is one mget: order, duplicates, misses",
          "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.mget_max_keys = 3;  // forces the split
  TokyoTyrantBackend b(o);
  REQUIRE(b.Store(StoreMode::kSet, "a", ItemView("1"), {}).ok());
  REQUIRE(b.Store(StoreMode::kSet, "c", ItemView("3"), {}).ok());
  std::vector<Operation> ops = {GetOp("a"),  GetOp("b"), GetOp("c"), GetOp("a"),
                                GetOp("zz"), GetOp("c"), GetOp("a")};
  b.Execute(ops);
  const char* expected[] = {"1", nullptr, "3", "1", nullptr, "3", "1"};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    INFO("op " << i);
    if (expected[i] == nullptr) {
      CHECK(ops[i].status.IsNotFound());
    } else {
      REQUIRE(ops[i].status.ok());
      CHECK(ops[i].result.value == expected[i]);
    }
  }
}

TEST_CASE("tt backend: mixed batches keep their order", "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantBackend b(OptionsFor(servers, kIoTimeout));
  std::vector<Operation> ops;
  ops.push_back(GetOp("k"));
  ops.push_back(SetOp("k", "one"));
  ops.push_back(GetOp("k"));
  ops.push_back(SetOp("k", "two", true));
  ops.push_back(GetOp("k"));
  Operation remove;
  remove.kind = OpKind::kRemove;
  remove.key = "k";
  ops.push_back(remove);
  ops.push_back(GetOp("k"));
  b.Execute(ops);
  CHECK(ops[0].status.IsNotFound());
  CHECK(ops[1].status.ok());
  CHECK(ops[2].result.value == "one");
  CHECK(ops[3].status.ok());
  CHECK(ops[4].result.value == "two");
  CHECK(ops[5].status.ok());
  CHECK(ops[6].status.IsNotFound());
}

TEST_CASE("tt backend: bad input is refused before the wire", "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.max_item_size = 10;
  TokyoTyrantBackend b(o);
  Item item;
  CHECK(b.Get("", &item).IsInvalidArgument());
  CHECK(b.Store(StoreMode::kSet, "k", ItemView(std::string(11, 'x')), {}).IsTooLarge());
  CHECK(b.Get("k", &item).IsNotFound());
  CHECK(Rnum(b) == "0");
}

TEST_CASE("tt backend: a ring spreads keys over every server and reads them back",
          "[tokyotyrant][backend]") {
  auto servers = StartServers(3);
  TokyoTyrantBackend ring(OptionsFor(servers, kIoTimeout));
  std::vector<std::string> keys;
  for (int i = 0; i < 60; ++i) keys.push_back("ring" + std::to_string(i));
  // Operations borrow their keys and values: both vectors outlive Execute.
  std::vector<std::string> values;
  for (const auto& k : keys) values.push_back("v-" + k);
  std::vector<Operation> sets;
  for (std::size_t i = 0; i < keys.size(); ++i) sets.push_back(SetOp(keys[i], values[i]));
  ring.Execute(sets);
  for (const auto& op : sets) CHECK(op.status.ok());
  std::vector<Operation> gets;
  for (const auto& k : keys) gets.push_back(GetOp(k));
  ring.Execute(gets);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(gets[i].status.ok());
    CHECK(gets[i].result.value == values[i]);
  }
  CHECK(Rnum(ring) == "60");
  // Each server holds a share: none is empty with 60 keys on a ketama ring.
  for (const auto& server : servers) {
    TokyoTyrantOptions single;
    single.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(server->port()), 1});
    TokyoTyrantBackend alone(single);
    CHECK(Rnum(alone) != "0");
  }
  std::vector<std::string> prefixed;
  REQUIRE(ring.Extension("fwmkeys", std::vector<std::string>{"ring1"}, &prefixed).ok());
  CHECK(prefixed.size() == 11);  // ring1, ring10..ring19
  REQUIRE(ring.Flush().ok());
  CHECK(Rnum(ring) == "0");
}

TEST_CASE("tt backend: extension commands", "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantBackend b(OptionsFor(servers, kIoTimeout));
  std::vector<std::string> r;
  using Args = std::vector<std::string>;
  REQUIRE(b.Store(StoreMode::kSet, "user:1", ItemView("alice"), {}).ok());
  REQUIRE(b.Store(StoreMode::kSet, "user:2", ItemView("bob"), {}).ok());
  REQUIRE(b.Store(StoreMode::kSet, "other", ItemView("x"), {}).ok());

  REQUIRE(b.Extension("fwmkeys", Args{"user:"}, &r).ok());
  std::sort(r.begin(), r.end());
  CHECK(r == Args{"user:1", "user:2"});
  REQUIRE(b.Extension("fwmkeys", Args{"user:", "1"}, &r).ok());
  CHECK(r.size() == 1);
  REQUIRE(b.Extension("vsiz", Args{"user:1"}, &r).ok());
  CHECK(r == Args{"5"});
  CHECK(b.Extension("vsiz", Args{"nope"}, &r).IsNotFound());
  REQUIRE(b.Extension("adddouble", Args{"d", "1.5"}, &r).ok());
  REQUIRE(b.Extension("adddouble", Args{"d", "-0.25"}, &r).ok());
  CHECK(r == Args{"1.25"});
  REQUIRE(b.Extension("addint", Args{"i", "-4"}, &r).ok());
  CHECK(r == Args{"-4"});
  REQUIRE(b.Extension("putcat", Args{"user:2", "by"}, &r).ok());
  REQUIRE(b.Extension("putshl", Args{"user:2", "!", "3"}, &r).ok());
  Item item;
  REQUIRE(b.Get("user:2", &item).ok());
  CHECK(item.value == "by!");
  REQUIRE(b.Extension("rnum", {}, &r).ok());
  CHECK(r == Args{"5"});
  REQUIRE(b.Extension("size", {}, &r).ok());
  CHECK(std::stoull(r.at(0)) > 0);
  REQUIRE(b.Extension("keys", {}, &r).ok());
  CHECK(r.size() == 5);
  REQUIRE(b.Extension("misc", Args{"getlist", "user:1", "missing", "other"}, &r).ok());
  CHECK(r == Args{"user:1", "alice", "other", "x"});
  CHECK(b.Extension("misc", Args{"no-such-function", "k"}, &r).IsInvalidArgument());
  REQUIRE(b.Extension("sync", {}, &r).ok());
  CHECK(b.Extension("addint", Args{"i", "x"}, &r).IsInvalidArgument());
  CHECK(b.Extension("vsiz", {}, &r).IsInvalidArgument());
  CHECK(b.Extension("copy", Args{"@ls"}, &r).IsUnsupported());
  StatsMap stats;
  REQUIRE(b.Stats(&stats).ok());
  bool has_rnum = false;
  for (const auto& [name, value] : stats) has_rnum |= name.ends_with(" rnum") && value == "5";
  CHECK(has_rnum);
}

TEST_CASE("tt backend: flush and stats ask every live server at once and name a dead one",
          "[tokyotyrant][backend][faults]") {
  auto servers = StartServers(2);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  // A server nobody listens on, between the two live ones.
  const test::RefusingPort refusing;
  o.servers.insert(o.servers.begin() + 1,
                   {"127.0.0.1", static_cast<std::uint16_t>(refusing.port()), 1});
  o.pool.connection.connect_timeout = std::chrono::milliseconds(2000);
  TokyoTyrantBackend ring(o);
  std::vector<std::unique_ptr<TokyoTyrantBackend>> alone;
  for (const auto& server : servers) {
    TokyoTyrantOptions single;
    single.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(server->port()), 1});
    alone.push_back(std::make_unique<TokyoTyrantBackend>(single));
    REQUIRE(alone.back()->Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  }
  StatsMap stats;
  CHECK(ring.Stats(&stats).IsUnavailable());  // the dead server's error
  // Both live servers' figures, in configuration order, whatever order they arrived in.
  std::vector<std::string> rnum_of;
  for (const auto& [name, value] : stats) {
    if (name.ends_with(" rnum")) rnum_of.push_back(name);
  }
  CHECK(rnum_of == std::vector<std::string>{o.servers[0].HostPort() + " rnum",
                                            o.servers[2].HostPort() + " rnum"});
  CHECK(ring.Flush().IsUnavailable());
  for (auto& backend : alone) CHECK(Rnum(*backend) == "0");  // every live server was flushed
}

TEST_CASE("tt backend: a dead server is an error, never a miss, and a restart heals",
          "[tokyotyrant][backend][faults]") {
  auto servers = StartServers(1);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.pool.failure_limit = 1000;  // keep retrying: this test is about reconnecting
  TokyoTyrantBackend b(o);
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(servers[0]->Kill().ok());
  Item item;
  Status s = b.Get("k", &item);
  CHECK(s.IsError());
  CHECK_FALSE(s.IsNotFound());
  REQUIRE(servers[0]->Restart().ok());
  // The on-memory store restarted empty; the pooled connection reconnects.
  s = b.Get("k", &item);
  if (!s.IsNotFound()) s = b.Get("k", &item);  // the first use may meet the dead socket
  CHECK(s.IsNotFound());
  CHECK(b.Store(StoreMode::kSet, "k", ItemView("again"), {}).ok());
}

TEST_CASE("tt backend: a stalled server times out, then serves again",
          "[tokyotyrant][backend][faults]") {
  auto servers = StartServers(1);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.pool.connection.io_timeout = std::chrono::milliseconds(200);
  o.pool.failure_limit = 1000;
  TokyoTyrantBackend b(o);
  REQUIRE(b.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(servers[0]->Pause().ok());
  Item item;
  const Status stalled = b.Get("k", &item);
  INFO(stalled.ToString());
  CHECK(stalled.IsTimeout());
  REQUIRE(servers[0]->Resume().ok());
  // The timed-out connection was dropped: no stale reply is read as this one's.
  REQUIRE(b.Get("k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("tt backend: dead servers are marked and skipped with failover",
          "[tokyotyrant][backend][faults]") {
  auto servers = StartServers(2);
  TokyoTyrantOptions o = OptionsFor(servers, kIoTimeout);
  o.pool.failure_limit = 1;
  o.pool.retry_timeout = std::chrono::milliseconds(60000);
  o.pool.failover = true;
  TokyoTyrantBackend b(o);
  REQUIRE(servers[1]->Stop().ok());
  // Every key ends up served by the live server once the dead one is marked.
  int ok = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string key = "f" + std::to_string(i);
    Status s = b.Store(StoreMode::kSet, key, ItemView("v"), {});
    if (!s.ok()) s = b.Store(StoreMode::kSet, key, ItemView("v"), {});
    if (s.ok()) ++ok;
  }
  CHECK(ok == 40);
}

// The failover tests' timing: a paused server is marked dead by one read that
// times out (kFailoverIo), and rests kFailoverRetry, long enough for the writes
// that go around it to end before it is tried again, even on a loaded machine.
constexpr std::chrono::milliseconds kFailoverIo{1000};
constexpr std::chrono::milliseconds kFailoverRetry{2000};
constexpr std::chrono::milliseconds kPastRetry = kFailoverRetry + std::chrono::milliseconds(200);

// Tokyo Tyrant keeps its data through an outage, so without failover's repair
// a server that comes back would serve the value it held before the writes
// that went around it.
TEST_CASE("tt backend: with failover a server that comes back serves no value older than the "
          "last write",
          "[tokyotyrant][backend][faults]") {
  auto servers = StartServers(2);
  TokyoTyrantOptions o = OptionsFor(servers, kFailoverIo);
  o.pool.failover = true;
  o.pool.failure_limit = 1;
  o.pool.retry_timeout = kFailoverRetry;
  // 10000: the keys are noted and deleted; 2: too many to note, the servers are emptied.
  o.pool.failover_max_keys = GENERATE(10000, 2);
  INFO("failover_max_keys " << o.pool.failover_max_keys);
  auto ring = net::Distribution::Create(o.distribution, o.servers);
  std::vector<std::string> on_zero;
  for (int i = 0; i < 40; ++i) {
    const std::string key = "back:" + std::to_string(i);
    if (ring->ServerFor(key) == 0) on_zero.push_back(key);
  }
  REQUIRE(on_zero.size() >= 4);
  const std::string appended = on_zero.back();  // written around the outage by putcat
  on_zero.pop_back();
  TokyoTyrantBackend b(o);
  for (const std::string& key : on_zero) {
    REQUIRE(b.Store(StoreMode::kSet, key, ItemView("v1"), {}).ok());
  }
  REQUIRE(b.Store(StoreMode::kSet, appended, ItemView("v1"), {}).ok());

  REQUIRE(servers[0]->Pause().ok());
  Item item;
  CHECK(b.Get(on_zero.front(), &item).IsTimeout());  // marks server 0 dead
  for (const std::string& key : on_zero) {
    INFO(key);
    REQUIRE(b.Store(StoreMode::kSet, key, ItemView("v2"), {}).ok());
  }
  std::vector<std::string> reply;
  REQUIRE(b.Extension("putcat", std::vector<std::string>{appended, "+"}, &reply).ok());
  REQUIRE(servers[0]->Resume().ok());
  std::this_thread::sleep_for(kPastRetry);

  for (const std::string& key : on_zero) {
    INFO(key);
    const Status got = b.Get(key, &item);
    REQUIRE((got.ok() || got.IsNotFound()));
    if (got.ok()) CHECK(item.value == "v2");
  }
  const Status got = b.Get(appended, &item);
  REQUIRE((got.ok() || got.IsNotFound()));
  if (got.ok()) CHECK(item.value == "+");
}

namespace {

// Two Tokyo Tyrant servers with failover (the timing above), and keys of each:
// a paused server 0 is marked dead by one read.
struct TtFailover {
  Servers servers = StartServers(2);
  TokyoTyrantOptions options;
  std::vector<std::string> on_zero, on_one;

  TtFailover() {
    options = OptionsFor(servers, kFailoverIo);
    options.pool.failover = true;
    options.pool.failure_limit = 1;
    options.pool.retry_timeout = kFailoverRetry;
    auto ring = net::Distribution::Create(options.distribution, options.servers);
    for (int i = 0; i < 40; ++i) {
      const std::string key = "fo:" + std::to_string(i);
      (ring->ServerFor(key) == 0 ? on_zero : on_one).push_back(key);
    }
    REQUIRE(on_zero.size() >= 3);
    REQUIRE(on_one.size() >= 2);
  }
  // Pauses server 0 and marks it dead.
  void PauseZero(TokyoTyrantBackend& b) {
    REQUIRE(servers[0]->Pause().ok());
    Item item;
    CHECK(b.Get(on_zero.front(), &item).IsTimeout());
  }
  // Resumes server 0 and waits out retry_timeout.
  void ResumeZero() {
    REQUIRE(servers[0]->Resume().ok());
    std::this_thread::sleep_for(kPastRetry);
  }
  // What server 0 itself holds for `key` (a backend of that server alone).
  std::string OnServerZero(const std::string& key) {
    TokyoTyrantOptions alone = OptionsFor(servers, std::chrono::milliseconds(500));
    alone.servers.resize(1);
    TokyoTyrantBackend zero(alone);
    Item item;
    const Status s = zero.Get(key, &item);
    return s.ok() ? item.value : s.IsNotFound() ? "(miss)" : s.ToString();
  }
};

}  // namespace

TEST_CASE("tt backend: with failover misc putlist and outlist note every key, and reads none",
          "[tokyotyrant][backend][faults]") {
  TtFailover f;
  TokyoTyrantBackend b(f.options);
  const std::string a = f.on_zero[0], c = f.on_zero[1], read = f.on_zero[2];
  for (const std::string& key : {a, c, read}) {
    REQUIRE(b.Store(StoreMode::kSet, key, ItemView("old"), {}).ok());
  }
  const bool put = GENERATE(true, false);
  f.PauseZero(b);
  std::vector<std::string> reply;
  using Args = std::vector<std::string>;
  const Args args = put ? Args{"putlist", a, "new", c, "new"} : Args{"outlist", a, c};
  REQUIRE(b.Extension("misc", args, &reply).ok());
  // A read around the dead server is no write: nothing of it is deleted later.
  const Status read_around =
      b.Extension("misc", std::vector<std::string>{"getlist", read}, &reply);
  INFO(read_around.ToString());
  f.ResumeZero();
  Item item;
  for (const std::string& key : {a, c}) {
    INFO(key);
    const Status got = b.Get(key, &item);
    REQUIRE((got.ok() || got.IsNotFound()));
    if (got.ok()) CHECK(item.value == "new");
  }
  // The read was not noted: the key's value on its own server is still there.
  CHECK(f.OnServerZero(read) == "old");
}

TEST_CASE("tt backend: misc lists whose keys live on different servers, or unpaired, are refused",
          "[tokyotyrant][backend]") {
  TtFailover f;
  TokyoTyrantBackend b(f.options);
  std::vector<std::string> reply;
  const Status s = b.Extension(
      "misc", std::vector<std::string>{"putlist", f.on_zero[0], "v", f.on_one[0], "v"}, &reply);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("different servers") != std::string::npos);
  Item item;
  CHECK(b.Get(f.on_zero[0], &item).IsNotFound());  // nothing was sent
  const Status odd =
      b.Extension("misc", std::vector<std::string>{"putlist", f.on_zero[0], "v", f.on_zero[1]},
                  &reply);
  CHECK(odd.IsInvalidArgument());
  CHECK(odd.message().find("pairs") != std::string::npos);
  CHECK(b.Get(f.on_zero[0], &item).IsNotFound());
}

TEST_CASE("tt backend: a failover repair that runs out of memory is tried again, and leaves "
          "nothing in the thread's next batch",
          "[tokyotyrant][backend][faults]") {
  TtFailover f;
  TokyoTyrantBackend b(f.options);
  const std::string owned = f.on_zero[0], other = f.on_one[0], unrelated = f.on_one[1];
  REQUIRE(b.Store(StoreMode::kSet, owned, ItemView("old"), {}).ok());
  f.PauseZero(b);
  REQUIRE(b.Store(StoreMode::kSet, owned, ItemView("new"), {}).ok());  // around server 0
  f.ResumeZero();
  // The repair's connection to server 0 cannot be made: the batch throws while
  // routing, after its first operation was grouped.
  std::vector<Operation> batch(2);
  batch[0].kind = OpKind::kRemove;
  batch[0].key = other;
  batch[1].kind = OpKind::kGet;
  batch[1].key = owned;
  test::FailNextAllocationOf(sizeof(net::Connection));
  CHECK_THROWS_AS(b.Execute(batch), std::bad_alloc);
  test::FailNextAllocationOf(0);
  // The grouped remove is not sent with the thread's next batch.
  REQUIRE(b.Store(StoreMode::kSet, other, ItemView("kept"), {}).ok());
  std::vector<Operation> next(1);
  next[0].kind = OpKind::kGet;
  next[0].key = unrelated;
  b.Execute(next);
  Item item;
  REQUIRE(b.Get(other, &item).ok());
  CHECK(item.value == "kept");
  // The repair is tried again after retry_timeout, and server 0 serves its keys again.
  std::this_thread::sleep_for(kPastRetry);
  const Status got = b.Get(owned, &item);
  REQUIRE((got.ok() || got.IsNotFound()));
  if (got.ok()) CHECK(item.value == "new");
  REQUIRE(b.Store(StoreMode::kSet, owned, ItemView("newest"), {}).ok());
  CHECK(f.OnServerZero(owned) == "newest");
}

namespace {

// A server that answers every connection with fixed bytes, to show the client
// drops a connection whose reply does not frame.
class CannedServer {
 public:
  explicit CannedServer(std::string reply) : reply_(std::move(reply)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(fd_, 8) == 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  void Serve() {
    for (int i = 0; i < 4; ++i) {  // a bounded number of connections
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++accepted_;
      char buf[256];
      if (recv(c, buf, sizeof buf, 0) > 0) send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      close(c);
    }
  }
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

}  // namespace

TEST_CASE("tt backend: a reply that does not frame is a protocol error",
          "[tokyotyrant][backend][faults]") {
  // (A size over the limit is too_large: see the next test.)
  for (const std::string& reply :
       {std::string("\x02", 1), std::string("\x00\xff\xff\xff\xff", 5)}) {
    CannedServer canned(reply);
    TokyoTyrantOptions o;
    o.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(canned.port()), 1});
    o.pool.connection.io_timeout = std::chrono::milliseconds(2000);
    TokyoTyrantBackend b(o);
    Item item;
    CHECK(b.Get("k", &item).IsProtocolError());
  }
}

// ttserver never fails an mget, so its 01 is a stream out of step, not misses;
// a put's or putcat's 01 is a write that failed, not a key that was present.
TEST_CASE("tt backend: a status 01 means what its command makes it mean",
          "[tokyotyrant][backend][faults]") {
  auto backend_at = [](const CannedServer& canned) {
    TokyoTyrantOptions o;
    o.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(canned.port()), 1});
    o.pool.connection.io_timeout = std::chrono::milliseconds(2000);
    o.pool.retry_timeout = std::chrono::milliseconds(0);
    return std::make_unique<TokyoTyrantBackend>(o);
  };
  const std::string failed("\x01", 1);
  {
    CannedServer canned(failed);
    auto b = backend_at(canned);
    std::vector<Operation> batch(2);
    batch[0].key = "a";
    batch[1].key = "b";
    b->Execute(batch);
    for (const Operation& op : batch) {
      INFO(op.status.ToString());
      CHECK(op.status.IsProtocolError());
    }
  }
  {
    CannedServer canned(failed);
    const Status put = backend_at(canned)->Store(StoreMode::kSet, "k", ItemView("v"), {});
    INFO(put.ToString());
    CHECK(put.IsIoError());
  }
  {
    CannedServer canned(failed);
    CHECK(backend_at(canned)->Store(StoreMode::kAdd, "k", ItemView("v"), {}).IsNotStored());
  }
}

// A value past the 256 MiB cachet reads is too_large for its operation; the
// server is not counted as failing, so two such reads do not mark it dead.
TEST_CASE("tt backend: a reply over cachet's limits is too_large, not a failing server",
          "[tokyotyrant][backend][faults]") {
  CannedServer canned(std::string("\x00\x10\x00\x00\x01", 5));
  TokyoTyrantOptions o;
  o.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(canned.port()), 1});
  o.pool.connection.io_timeout = std::chrono::milliseconds(2000);
  o.pool.failure_limit = 1;
  TokyoTyrantBackend b(o);
  Item item;
  for (int i = 0; i < 2; ++i) {
    const Status s = b.Get("k", &item);
    INFO(s.ToString());
    CHECK(s.IsTooLarge());
  }
  // In a batch the reply is the read's; the write after it, sent but unanswered
  // when the connection went, may have been applied: io_error, not too_large.
  std::vector<Operation> batch;
  batch.push_back(Operation{});
  batch[0].key = "big";
  batch.push_back(SetOp("other", "v"));
  b.Execute(batch);
  CHECK(batch[0].status.IsTooLarge());
  INFO(batch[1].status.ToString());
  CHECK(batch[1].status.IsIoError());
  std::vector<ServerHealth> health;
  REQUIRE(b.Health(&health).ok());
  CHECK(health.at(0).protocol_errors == 0);
  CHECK(health.at(0).marked_dead == 0);
}

}  // namespace cachet::tokyotyrant

namespace cachet::tokyotyrant {

// putnr has no reply: a batch ending in putnr writes after a read ends with
// rnum, so the read's reply cannot end the exchange while they still go out.
TEST_CASE("tt backend: a batch ending in large putnr writes is sent whole",
          "[tokyotyrant][backend]") {
  auto servers = StartServers(1);
  TokyoTyrantBackend b(OptionsFor(servers, kIoTimeout));
  REQUIRE(b.Store(StoreMode::kSet, "a", ItemView("A"), {}).ok());
  const std::string big(16 << 20, 'b');
  std::vector<Operation> batch;
  batch.push_back(Operation{});
  batch[0].key = "a";
  batch.push_back(SetOp("big", big, /*noreply=*/true));
  batch.push_back(SetOp("big2", big, /*noreply=*/true));
  b.Execute(batch);
  for (const Operation& op : batch) {
    INFO(op.status.ToString());
    CHECK(op.status.ok());
  }
  CHECK(batch[0].result.value == "A");
  Item item;
  REQUIRE(b.Get("big2", &item).ok());
  CHECK(item.value.size() == big.size());
  std::vector<ServerHealth> health;
  REQUIRE(b.Health(&health).ok());
  CHECK(health.at(0).protocol_errors == 0);
}

TEST_CASE("tt backend through the envelope: a read never deletes a record",
          "[tokyotyrant][backend][envelope]") {
  auto servers = StartServers(1);
  auto plain = std::make_shared<TokyoTyrantBackend>(OptionsFor(servers, kIoTimeout));
  std::shared_ptr<Backend> wrapped = WithEnvelope(plain);
  REQUIRE(wrapped != plain);
  Item item;

  // What another client (tcrmgr put) may write: the magic, a version byte and
  // an expiry in 1970, without the envelope's checksum. cachet reads it raw.
  const std::string foreign(
      "\xCA\xCE\x7E\x01\x00\x00\x00\x00\xE8\x03\x00\x00\x00\x00\x00\x00tcrmgr", 22);
  REQUIRE(plain->Store(StoreMode::kSet, "foreign", ItemView(foreign), {}).ok());
  REQUIRE(wrapped->Get("foreign", &item).ok());
  CHECK(item.value == foreign);
  REQUIRE(plain->Get("foreign", &item).ok());
  CHECK(item.value == foreign);

  // cachet's own envelope that has expired: a miss, and still on the server.
  std::string expired;
  EncodeEnvelope(EnvelopeHeader{0, 1000}, "stale", &expired);
  REQUIRE(plain->Store(StoreMode::kSet, "expired", ItemView(expired), {}).ok());
  CHECK(wrapped->Get("expired", &item).IsNotFound());
  std::vector<Operation> batch{GetOp("expired")};
  wrapped->Execute(batch);
  CHECK(batch[0].status.IsNotFound());
  REQUIRE(plain->Get("expired", &item).ok());
  CHECK(item.value == expired);
  CHECK(Rnum(*plain) == "2");

  // The next write takes its place; an add counts it as absent.
  REQUIRE(wrapped->Store(StoreMode::kAdd, "expired", ItemView("fresh"), {}).ok());
  REQUIRE(wrapped->Get("expired", &item).ok());
  CHECK(item.value == "fresh");
}

}  // namespace cachet::tokyotyrant
