// memcached with failover = true against real servers: a server paused
// (SIGSTOP/SIGCONT) or killed and restarted on the same port while its keys
// are written to the other server. Whatever the outages, a read returns the
// last value written for the key or a miss, never an older value.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "memcached_fixture.h"

namespace cachet::memcached::test {
namespace {

using std::chrono::milliseconds;

// Long enough for a read of every key to end before a dead server is retried,
// with a second to spare for a loaded machine's stalls.
constexpr milliseconds kRetry{2000};
// What a live server has to answer in: a stall of a loaded machine is no timeout.
constexpr milliseconds kIo{1000};

// memcached is always there (.ci/setup installs it): without it these tests
// fail rather than pass having checked nothing.
void RequireMemcached() {
  INFO("memcached is not installed: run .ci/setup");
  REQUIRE(cachet::test::HaveMemcached());
}

struct Failover {
  std::vector<std::unique_ptr<ServerProcess>> servers;
  MemcachedOptions options;
  std::unique_ptr<net::Distribution> distribution;
  std::vector<std::string> keys;
  std::vector<std::string> on_zero;  // the keys server 0 owns

  explicit Failover(std::size_t max_keys) : servers(StartServers(2)) {
    REQUIRE(servers.size() == 2);
    options = OptionsFor(servers, GENERATE(Protocol::kText, Protocol::kMeta));
    options.pool.failover = true;
    options.pool.failure_limit = 1;
    options.pool.retry_timeout = kRetry;
    options.pool.connection.io_timeout = kIo;
    options.pool.failover_max_keys = max_keys;
    distribution = net::Distribution::Create(options.distribution, options.servers);
    for (int i = 0; i < 60; ++i) {
      keys.push_back("failover:" + std::to_string(i));
      if (distribution->ServerFor(keys.back()) == 0) on_zero.push_back(keys.back());
    }
    REQUIRE(on_zero.size() > 5);
    REQUIRE(on_zero.size() < keys.size());
  }

  // Whether more of server 0's keys move than failover_max_keys notes.
  bool Overflows() const { return on_zero.size() > options.pool.failover_max_keys; }

  bool OnZero(const std::string& key) const { return distribution->ServerFor(key) == 0; }

  // Writes `value` to every key in one batch; every write must be acknowledged.
  static void WriteAll(MemcachedBackend& b, const std::vector<std::string>& keys,
                       const std::string& value) {
    std::vector<Operation> sets(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      sets[i].kind = OpKind::kStore;
      sets[i].key = keys[i];
      sets[i].item = ItemView(value);
    }
    b.Execute(sets);
    for (const Operation& op : sets) {
      INFO(op.key << ": " << op.status.ToString());
      REQUIRE(op.status.ok());
    }
  }

  // Server 0 fails one read, which marks it dead (failure_limit = 1).
  void MarkZeroDead(MemcachedBackend& b) const { MarkDead(b, on_zero.front()); }

  // Server 1 alike, by one of its own keys.
  void MarkOneDead(MemcachedBackend& b) const {
    for (const std::string& key : keys) {
      if (!OnZero(key)) return MarkDead(b, key);
    }
  }

  static void MarkDead(MemcachedBackend& b, const std::string& key) {
    Item item;
    const Status s = b.Get(key, &item);
    INFO(s.ToString());
    REQUIRE(s.IsError());
    REQUIRE_FALSE(s.IsNotFound());
  }
};

// Reads every key one by one: no value may be other than `latest`. Returns
// how many hits there were on each server's keys.
std::pair<int, int> ExpectLatestOrMiss(MemcachedBackend& b, const Failover& f,
                                       const std::string& latest) {
  int zero_hits = 0, one_hits = 0;
  for (const std::string& key : f.keys) {
    Item item;
    const Status s = b.Get(key, &item);
    INFO(key << " on server " << (f.OnZero(key) ? 0 : 1) << ": " << s.ToString() << " '"
             << item.value << "'");
    REQUIRE((s.ok() || s.IsNotFound()));
    if (!s.ok()) continue;
    CHECK(item.value == latest);
    ++(f.OnZero(key) ? zero_hits : one_hits);
  }
  return {zero_hits, one_hits};
}

// Reads `keys` one by one: no value may be other than `latest`.
void ExpectLatestOrMissOf(MemcachedBackend& b, const std::vector<std::string>& keys,
                          const std::string& latest) {
  for (const std::string& key : keys) {
    Item item;
    const Status s = b.Get(key, &item);
    INFO(key << ": " << s.ToString() << " '" << item.value << "'");
    REQUIRE((s.ok() || s.IsNotFound()));
    if (s.ok()) CHECK(item.value == latest);
  }
}

}  // namespace

TEST_CASE("failover: a paused server that comes back serves no value older than the last write",
          "[memcached][failover]") {
  RequireMemcached();
  Failover f(GENERATE(std::size_t{10000}, std::size_t{5}));
  INFO("failover_max_keys " << f.options.pool.failover_max_keys);
  MemcachedBackend b(f.options);
  Failover::WriteAll(b, f.keys, "v1");
  REQUIRE(f.servers[0]->Pause().ok());
  f.MarkZeroDead(b);
  Failover::WriteAll(b, f.keys, "v2");
  // Meanwhile server 1 serves server 0's keys, with what was written there.
  CHECK(ExpectLatestOrMiss(b, f, "v2") ==
        std::pair<int, int>(f.on_zero.size(), f.keys.size() - f.on_zero.size()));
  REQUIRE(f.servers[0]->Resume().ok());
  std::this_thread::sleep_for(kRetry + milliseconds(100));
  // Server 0 still holds v1 for its keys: it must not be served. Server 1's
  // own keys are kept, unless too many keys moved to note them all (then both
  // servers were flushed).
  const std::pair<int, int> back = ExpectLatestOrMiss(b, f, "v2");
  if (!f.Overflows()) CHECK(back.second == static_cast<int>(f.keys.size() - f.on_zero.size()));

  // A second outage: v3 goes to server 0 now; the v2 copies server 1 took in
  // the first outage must not come back.
  Failover::WriteAll(b, f.keys, "v3");
  const std::pair<int, int> written = ExpectLatestOrMiss(b, f, "v3");
  if (!f.Overflows()) {
    CHECK(written == std::pair<int, int>(f.on_zero.size(), f.keys.size() - f.on_zero.size()));
  }
  REQUIRE(f.servers[0]->Pause().ok());
  f.MarkZeroDead(b);
  ExpectLatestOrMiss(b, f, "v3");
  REQUIRE(f.servers[0]->Resume().ok());
}

TEST_CASE("failover: a server that was paused while the owner came back keeps no copy to serve",
          "[memcached][failover]") {
  RequireMemcached();
  Failover f(GENERATE(std::size_t{10000}, std::size_t{5}));
  INFO("failover_max_keys " << f.options.pool.failover_max_keys);
  MemcachedBackend b(f.options);
  using Clock = std::chrono::steady_clock;
  Failover::WriteAll(b, f.keys, "v1");
  REQUIRE(f.servers[0]->Pause().ok());
  f.MarkZeroDead(b);
  const Clock::time_point zero_dead = Clock::now();
  // Server 1 takes v2 for server 0's keys.
  Failover::WriteAll(b, f.keys, "v2");
  std::this_thread::sleep_until(zero_dead + kRetry / 2);
  // Server 0 comes back while server 1 stalls: server 1 is dead when server
  // 0 is retried and repaired, so its v2 copies cannot be deleted then.
  REQUIRE(f.servers[0]->Resume().ok());
  REQUIRE(f.servers[1]->Pause().ok());
  f.MarkOneDead(b);
  const Clock::time_point one_dead = Clock::now();
  std::this_thread::sleep_until(zero_dead + kRetry + milliseconds(50));
  // Server 0 is retried (and repaired) while server 1 still rests; server 1
  // is not asked anything till it is back.
  ExpectLatestOrMissOf(b, f.on_zero, "v2");
  REQUIRE(Clock::now() < one_dead + kRetry);
  Failover::WriteAll(b, f.on_zero, "v3");
  ExpectLatestOrMissOf(b, f.on_zero, "v3");
  // Server 1 is back, then server 0 stalls: server 1 serves server 0's keys
  // again, and must not serve the v2 it kept.
  REQUIRE(f.servers[1]->Resume().ok());
  std::this_thread::sleep_until(one_dead + kRetry + milliseconds(50));
  REQUIRE(f.servers[0]->Pause().ok());
  f.MarkZeroDead(b);
  ExpectLatestOrMissOf(b, f.on_zero, "v3");
  REQUIRE(f.servers[0]->Resume().ok());
}

TEST_CASE("failover: a server killed and restarted empty leaves no older value behind",
          "[memcached][failover]") {
  RequireMemcached();
  Failover f(GENERATE(std::size_t{10000}, std::size_t{5}));
  INFO("failover_max_keys " << f.options.pool.failover_max_keys);
  MemcachedBackend b(f.options);
  Failover::WriteAll(b, f.keys, "v1");
  REQUIRE(f.servers[0]->Kill().ok());
  f.MarkZeroDead(b);
  Failover::WriteAll(b, f.keys, "v2");
  REQUIRE(f.servers[0]->Restart().ok());
  std::this_thread::sleep_for(kRetry + milliseconds(100));
  // Server 0 is back and empty: its keys are misses, the others v2 (unless
  // too many keys moved to note them all: then server 1 was flushed too).
  const std::pair<int, int> back = ExpectLatestOrMiss(b, f, "v2");
  if (!f.Overflows()) CHECK(back.second == static_cast<int>(f.keys.size() - f.on_zero.size()));
  Failover::WriteAll(b, f.keys, "v3");
  // Killed again: server 1 serves server 0's keys, and must not serve the v2
  // it took for them in the first outage.
  REQUIRE(f.servers[0]->Kill().ok());
  f.MarkZeroDead(b);
  ExpectLatestOrMiss(b, f, "v3");
}

// A dead server is tried again after retry_timeout; while that try fails, the
// writes that went around it are the only copies of its keys, and stay.
TEST_CASE("failover: writes moved around a server stay readable while it is still down",
          "[memcached][failover]") {
  RequireMemcached();
  Failover f(GENERATE(std::size_t{10000}, std::size_t{5}));
  INFO("failover_max_keys " << f.options.pool.failover_max_keys);
  MemcachedBackend b(f.options);
  Failover::WriteAll(b, f.keys, "v1");
  REQUIRE(f.servers[0]->Kill().ok());
  f.MarkZeroDead(b);
  Failover::WriteAll(b, f.keys, "v2");
  for (int round = 0; round < 2; ++round) {
    // Server 0 is tried again by the first read of one of its keys, and
    // refuses: its keys stay on server 1, which serves that read too.
    std::this_thread::sleep_for(kRetry + milliseconds(100));
    for (const std::string& key : f.keys) {
      Item item;
      const Status s = b.Get(key, &item);
      INFO("round " << round << ", " << key << ": " << s.ToString());
      REQUIRE(s.ok());
      CHECK(item.value == "v2");
    }
  }
}

namespace {

// Three servers with failover, and keys for them: `key` is server 0's and
// falls back to server 1, then server 2; `ones` is server 1's, `zeros` another
// of server 0's.
struct ThreeServers {
  std::vector<std::unique_ptr<ServerProcess>> servers = StartServers(3);
  MemcachedOptions options;
  std::string key, ones, zeros;

  ThreeServers(Protocol protocol, milliseconds rest, milliseconds io) {
    REQUIRE(servers.size() == 3);
    options = OptionsFor(servers, protocol);
    options.pool.failover = true;
    options.pool.failure_limit = 1;
    options.pool.retry_timeout = rest;
    options.pool.connection.io_timeout = io;
    const auto distribution = net::Distribution::Create(options.distribution, options.servers);
    const bool without_zero[3] = {true, false, false};
    for (int i = 0; i < 2000; ++i) {
      const std::string candidate = "three:" + std::to_string(i);
      const std::size_t home = distribution->ServerFor(candidate);
      if (home == 0 && key.empty() && distribution->ServerFor(candidate, without_zero) == 1) {
        key = candidate;
      } else if (home == 0 && zeros.empty()) {
        zeros = candidate;
      } else if (home == 1) {
        ones = candidate;
      }
    }
    REQUIRE_FALSE(key.empty());
    REQUIRE_FALSE(ones.empty());
    REQUIRE_FALSE(zeros.empty());
  }
};

// Sets `key` to `value`, acknowledged.
void SetTo(MemcachedBackend& b, const std::string& key, const std::string& value) {
  const Status s = b.Store(StoreMode::kSet, key, ItemView(value), WriteOptions{});
  INFO(key << " = " << value << ": " << s.ToString());
  REQUIRE(s.ok());
}

using Clock = std::chrono::steady_clock;

}  // namespace

TEST_CASE("failover: with three servers a key is served where its last write went, "
          "not from an earlier stand-in", "[memcached][failover]") {
  // The key goes to server 1 (v2), 1 stalls, it goes to 2 (v3), 0 fails its
  // repair and it goes to 2 again (v4); then 1 is back while 0 still rests:
  // 1's v2 must not be served.
  RequireMemcached();
  ThreeServers three(GENERATE(Protocol::kText, Protocol::kMeta), kRetry, kIo);
  MemcachedBackend b(three.options);
  SetTo(b, three.key, "v1");
  REQUIRE(three.servers[0]->Pause().ok());
  Failover::MarkDead(b, three.key);
  const Clock::time_point zero_dead = Clock::now();
  SetTo(b, three.key, "v2");  // to server 1
  // Server 1 must still rest after server 0's failed repair (one io_timeout) below:
  // its rest starts 2 s after server 0's (this second and its own mark's io_timeout).
  std::this_thread::sleep_for(milliseconds(1000));
  REQUIRE(three.servers[1]->Pause().ok());
  Failover::MarkDead(b, three.ones);
  const Clock::time_point one_dead = Clock::now();
  SetTo(b, three.key, "v3");  // to server 2
  REQUIRE(three.servers[1]->Resume().ok());
  // Server 0's rest ends first: its repair fails (it is still paused), and v4
  // goes to server 2, server 1 still resting.
  std::this_thread::sleep_until(zero_dead + kRetry + milliseconds(50));
  SetTo(b, three.key, "v4");
  REQUIRE(Clock::now() < one_dead + kRetry);
  // Server 1's rest ends; server 0 rests again after its failed repair.
  std::this_thread::sleep_until(one_dead + kRetry + milliseconds(50));
  ExpectLatestOrMissOf(b, {three.key}, "v4");
  REQUIRE(three.servers[0]->Resume().ok());
}

TEST_CASE("failover: while the owner is repaired a key still goes where its last write went",
          "[memcached][failover]") {
  // As above, but the read comes while another thread repairs server 0 (which
  // is still paused, so the repair waits one io_timeout): server 1, back from
  // its rest, holds the older v2 and must not serve it.
  RequireMemcached();
  const milliseconds rest(1000), io(400);
  ThreeServers three(Protocol::kText, rest, io);
  MemcachedBackend b(three.options);
  SetTo(b, three.key, "v1");
  REQUIRE(three.servers[0]->Pause().ok());
  Failover::MarkDead(b, three.key);
  SetTo(b, three.key, "v2");  // to server 1
  REQUIRE(three.servers[1]->Pause().ok());
  Failover::MarkDead(b, three.ones);
  const Clock::time_point one_dead = Clock::now();
  REQUIRE(three.servers[1]->Resume().ok());
  SetTo(b, three.key, "v3");  // to server 2
  // Another thread starts server 0's repair (its rest is over) shortly before
  // server 1's rest ends; the repair waits on the paused server 0.
  std::this_thread::sleep_until(one_dead + rest - io / 2);
  std::thread repairer([&] {
    Item ignored;
    (void)b.Get(three.zeros, &ignored);
  });
  std::this_thread::sleep_until(one_dead + rest + milliseconds(40));
  Item item;
  const Status got = b.Get(three.key, &item);
  repairer.join();  // before any check: a failed REQUIRE must not leave it running
  INFO(got.ToString() << " '" << item.value << "'");
  REQUIRE((got.ok() || got.IsNotFound()));
  if (got.ok()) CHECK(item.value == "v3");
  REQUIRE(three.servers[0]->Resume().ok());
}

}  // namespace cachet::memcached::test
