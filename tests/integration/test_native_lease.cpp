// GetOrCompute on the stores with their own leases (kNativeLease): memcached's
// meta protocol (mg with N and R, the W/Z/X flags, md with I) and Redis (the
// lease script: the value and a SET NX PX lock in one step). Each Cache here has
// a Backend of its own, as separate processes would; a raw connection looks at
// what the server holds. (Sixteen processes on each store:
// tests/integration/cli/test_fetch_processes.cpp.)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_server.h"
#include "support/waits.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// One request on a fresh loopback connection; the reply's first `min_bytes`
// bytes at least (read for at most 2 s).
std::string RawExchange(int port, const std::string& request, std::size_t min_bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    // Bounded: each pass reads something or ends (timeout, close).
    while (reply.size() < min_bytes) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      reply.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

// A RESP command of plain arguments.
std::string Resp(std::initializer_list<std::string> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

struct Store {
  std::unique_ptr<ServerProcess> server;
  std::string section;
};

Store Start(const std::string& kind) {
  Store store;
  if (kind == "memcached-meta") {
    REQUIRE(HaveMemcached());
    auto server = StartMemcached();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    store.section = "backend = memcached\n[memcached]\nservers = " + store.server->address() +
                    "\nprotocol = meta\n";
  } else {
    REQUIRE(kind == "redis");
    auto server = StartRedis();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    store.section = "backend = redis\n[redis]\nservers = " + store.server->address() + "\n";
  }
  return store;
}

std::unique_ptr<Cache> OpenCache(const Store& store) {
  auto config = Config::Parse("[cache]\n" + store.section, "native lease test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

// GetOrCompute of "hot" through each of `callers` at once, each on a thread of
// its own, with a loader that counts its runs in `*runs`, takes `pause` and
// returns "value": what each call answered (the value, or its status).
std::vector<std::string> LoadHotOnThreads(const std::vector<Cache*>& callers,
                                          const ComputeOptions& options, milliseconds pause,
                                          std::atomic<int>* runs) {
  std::vector<std::string> values(callers.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < callers.size(); ++i) {
    threads.emplace_back([&, i] {
      auto got = callers[i]->GetOrCompute<std::string>(
          "hot",
          [&]() -> Result<std::string> {
            ++*runs;
            std::this_thread::sleep_for(pause);
            return std::string("value");
          },
          options);
      values[i] = got.hit() ? got.value() : got.status().ToString();
    });
  }
  for (std::thread& thread : threads) thread.join();
  return values;
}

}  // namespace

TEST_CASE("memcached meta and Redis declare the native lease, text memcached does not",
          "[compute][native]") {
  REQUIRE(HaveMemcached());
  auto server = StartMemcached();
  REQUIRE(server.ok());
  for (const char* protocol : {"text", "meta"}) {
    auto config = Config::Parse("[cache]\nbackend = memcached\n[memcached]\nservers = " +
                                    (*server)->address() + "\nprotocol = " + protocol + "\n",
                                "capability test");
    REQUIRE(config.ok());
    auto cache = Cache::Open(std::move(config).value());
    REQUIRE(cache.ok());
    CHECK((*cache)->backend().capabilities().has(Capability::kNativeLease) ==
          (std::string(protocol) == "meta"));
  }
  Store redis = Start("redis");
  CHECK(OpenCache(redis)->backend().capabilities().has(Capability::kNativeLease));
}

TEST_CASE("a second caller waits on the store's own lease, and no lease key is made",
          "[compute][native]") {
  const std::string kind = GENERATE("memcached-meta", "redis");
  INFO("store: " << kind);
  Store store = Start(kind);
  auto winner_cache = OpenCache(store);
  auto waiter_cache = OpenCache(store);
  ComputeOptions options;
  options.ttl = milliseconds(60000);
  options.lease = milliseconds(10000);

  std::atomic<bool> loading{false};
  std::atomic<bool> release{false};
  std::string winner_value;
  std::thread winner([&] {
    auto got = winner_cache->GetOrCompute<std::string>(
        "k",
        [&]() -> Result<std::string> {
          loading = true;
          REQUIRE(WaitFor(release));
          return std::string("winner");
        },
        options);
    winner_value = got.hit() ? got.value() : got.status().ToString();
  });
  REQUIRE(WaitFor(loading));

  const int port = store.server->port();
  if (kind == "memcached-meta") {
    // The server's placeholder, its win already given: a new mg is told Z.
    CHECK(RawExchange(port, "mg k v\r\n", 8).starts_with("VA 0 Z"));
    CHECK(RawExchange(port, "mg k#lease v\r\n", 4) == "EN\r\n");
    // A plain read of the key is a miss, not the empty placeholder.
    CHECK(waiter_cache->Get("k").miss());
  } else {
    // The script's lock, beside the key in its slot, with the lease's expiry.
    CHECK(RawExchange(port, Resp({"EXISTS", "{k}#lease"}), 4) == ":1\r\n");
    CHECK(RawExchange(port, Resp({"EXISTS", "k#lease"}), 4) == ":0\r\n");
    const std::string pttl = RawExchange(port, Resp({"PTTL", "{k}#lease"}), 4);
    CHECK(pttl.starts_with(":"));
    CHECK(std::stol(pttl.substr(1)) > 5000);
    // Its value is the claim's token: 128 random bits in hex.
    const std::string token = RawExchange(port, Resp({"GET", "{k}#lease"}), 52);
    CHECK(token.starts_with("$45\r\ncachet lease "));
    CHECK(token.size() == 52);
  }

  std::atomic<int> waiter_runs{0};
  std::string waiter_value;
  std::thread waiter([&] {
    auto got = waiter_cache->GetOrCompute<std::string>(
        "k",
        [&]() -> Result<std::string> {
          ++waiter_runs;
          return std::string("waiter");
        },
        options);
    waiter_value = got.hit() ? got.value() : got.status().ToString();
  });
  std::this_thread::sleep_for(milliseconds(300));  // the waiter polls meanwhile
  release = true;
  winner.join();
  waiter.join();
  CHECK(winner_value == "winner");
  CHECK(waiter_value == "winner");
  CHECK(waiter_runs.load() == 0);
  if (kind == "redis") {
    CHECK(RawExchange(port, Resp({"EXISTS", "{k}#lease"}), 4) == ":0\r\n");  // given back
  }
}

TEST_CASE("sixteen Caches with native leases run the loader once", "[compute][native]") {
  const std::string kind = GENERATE("memcached-meta", "redis");
  INFO("store: " << kind);
  Store store = Start(kind);
  constexpr int kCaches = 16;
  std::vector<std::unique_ptr<Cache>> caches;
  for (int i = 0; i < kCaches; ++i) caches.push_back(OpenCache(store));
  ComputeOptions options;
  options.ttl = milliseconds(60000);
  options.lease = milliseconds(10000);
  std::vector<Cache*> callers;
  for (const auto& cache : caches) callers.push_back(cache.get());
  std::atomic<int> runs{0};
  for (const std::string& value : LoadHotOnThreads(callers, options, milliseconds(300), &runs)) {
    CHECK(value == "value");
  }
  CHECK(runs.load() == 1);
}

TEST_CASE("with the server down the threads of one Cache still load a key once",
          "[compute][native]") {
  const std::string kind = GENERATE("memcached-meta", "redis");
  INFO("store: " << kind);
  Store store = Start(kind);
  std::unique_ptr<Cache> cache = OpenCache(store);
  REQUIRE(store.server->Stop().ok());  // refused: no lease can be taken
  ComputeOptions options;
  options.lease = milliseconds(2000);
  const std::vector<Cache*> callers(4, cache.get());
  std::atomic<int> runs{0};
  for (const std::string& value : LoadHotOnThreads(callers, options, milliseconds(100), &runs)) {
    CHECK(value == "value");
  }
  CHECK(runs.load() == 1);
}

TEST_CASE("a throwing loader gives the native lease back at once", "[compute][native]") {
  const std::string kind = GENERATE("memcached-meta", "redis");
  INFO("store: " << kind);
  Store store = Start(kind);
  auto first = OpenCache(store);
  auto second = OpenCache(store);
  ComputeOptions options;
  options.lease = milliseconds(30000);
  options.lease_wait = milliseconds(30000);
  CHECK_THROWS_AS(first->GetOrCompute<std::string>(
                      "k", []() -> Result<std::string> { throw std::runtime_error("boom"); },
                      options),
                  std::runtime_error);
  // Had the lease stayed, this caller would wait out lease_wait (30 s).
  const auto started = SteadyClock::now();
  auto got = second->GetOrCompute<std::string>(
      "k", []() -> Result<std::string> { return std::string("loaded"); }, options);
  REQUIRE(got.hit());
  CHECK(got.value() == "loaded");
  CHECK(SteadyClock::now() - started < milliseconds(5000));
}

TEST_CASE("a failed refresh leaves the stale value, and the next caller refreshes it",
          "[compute][native]") {
  const std::string kind = GENERATE("memcached-meta", "redis");
  INFO("store: " << kind);
  Store store = Start(kind);
  auto cache = OpenCache(store);
  auto other = OpenCache(store);
  ComputeOptions options;
  options.ttl = milliseconds(1000);
  options.stale = milliseconds(60000);
  options.lease = milliseconds(30000);
  auto value = [](const char* v) { return [v]() -> Result<std::string> { return std::string(v); }; };
  REQUIRE(cache->GetOrCompute<std::string>("k", value("old"), options).value() == "old");
  std::this_thread::sleep_for(milliseconds(2100));  // stale, also to memcached's whole seconds

  int failed_runs = 0;
  auto failing = [&]() -> Result<std::string> {
    ++failed_runs;
    return Status::IoError("database down");
  };
  // The refresher's loader fails: it still gets the old value.
  auto stale = cache->GetOrCompute<std::string>("k", failing, options);
  CHECK(failed_runs == 1);
  REQUIRE(stale.hit());
  CHECK(stale.value() == "old");
  // Another process refreshes it at once: the lease was given back (on memcached,
  // md with I re-armed the item's win flag; without it the next mg gets Z until
  // the item expires, and this caller would be served "old").
  auto fresh = other->GetOrCompute<std::string>("k", value("new"), options);
  REQUIRE(fresh.hit());
  CHECK(fresh.value() == "new");
  CHECK(cache->GetOrCompute<std::string>("k", failing, options).value() == "new");
  CHECK(failed_runs == 1);
}

TEST_CASE("a value the store refuses gives the native lease up at once", "[compute][native]") {
  // memcached's default item limit is 1 MiB: a 2 MiB value is refused.
  Store store = Start("memcached-meta");
  auto first = OpenCache(store);
  auto second = OpenCache(store);
  ComputeOptions options;
  options.lease = milliseconds(30000);
  options.lease_wait = milliseconds(30000);
  const std::string big(2 << 20, 'x');
  auto got = first->GetOrCompute<std::string>(
      "big", [&]() -> Result<std::string> { return big; }, options);
  REQUIRE(got.hit());
  CHECK(got.value().size() == big.size());  // the caller still gets what it loaded
  CHECK(first->Get("big").miss());
  // Had the lease been kept, this caller would wait out lease_wait (30 s).
  const auto started = SteadyClock::now();
  auto next = second->GetOrCompute<std::string>(
      "big", []() -> Result<std::string> { return std::string("small"); }, options);
  REQUIRE(next.hit());
  CHECK(next.value() == "small");
  CHECK(SteadyClock::now() - started < milliseconds(5000));
}

TEST_CASE("a Redis key with unbalanced braces takes the native lease", "[compute][native]") {
  Store store = Start("redis");
  auto first = OpenCache(store);
  auto second = OpenCache(store);
  ComputeOptions options;
  options.lease = milliseconds(30000);
  options.lease_wait = milliseconds(30000);
  std::atomic<int> runs{0};
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  auto slow = [&]() -> Result<std::string> {
    ++runs;
    started = true;
    if (!WaitFor(release)) return Status::Timeout("never released");
    return std::string("loaded");
  };
  std::string a_value;
  std::thread a([&] { a_value = first->GetOrCompute<std::string>("a}b", slow, options).value(); });
  REQUIRE(WaitFor(started));
  // "{a}b}#lease" would hash "a", another slot: the lock's tag is 20658, the
  // smallest number in the slot of "a}b" (7866), and the key follows it.
  const int port = store.server->port();
  CHECK(RawExchange(port, Resp({"EXISTS", "{20658}a}b#lease"}), 4) == ":1\r\n");
  CHECK(RawExchange(port, Resp({"EXISTS", "a}b#lease"}), 4) == ":0\r\n");
  std::thread b([&] {
    std::this_thread::sleep_for(milliseconds(300));  // the second caller polls meanwhile
    release = true;
  });
  auto got = second->GetOrCompute<std::string>("a}b", slow, options);
  a.join();
  b.join();
  REQUIRE(got.hit());
  CHECK(got.value() == "loaded");
  CHECK(a_value == "loaded");
  CHECK(runs.load() == 1);
  CHECK(RawExchange(port, Resp({"EXISTS", "{20658}a}b#lease"}), 4) == ":0\r\n");  // given back
}

}  // namespace cachet::test

namespace cachet::test {

// Binary keys go out base64 and are not asked back: memcached names a
// placeholder's key raw, so a lease's reply must be matched by its O token.
TEST_CASE("memcached meta with binary keys takes its lease and reads a key being loaded",
          "[compute][native]") {
  Store store = Start("memcached-meta");
  store.section += "binary_keys = true\n";
  auto winner_cache = OpenCache(store);
  auto reader_cache = OpenCache(store);
  ComputeOptions options;
  options.ttl = milliseconds(60000);
  options.lease = milliseconds(10000);
  const std::string key = "bin key\xff";
  std::atomic<bool> loading{false};
  std::atomic<bool> release{false};
  std::string winner_value;
  std::thread winner([&] {
    auto got = winner_cache->GetOrCompute<std::string>(
        key,
        [&]() -> Result<std::string> {
          loading = true;
          REQUIRE(WaitFor(release));
          return std::string("loaded");
        },
        options);
    winner_value = got.hit() ? got.value() : got.status().ToString();
  });
  REQUIRE(WaitFor(loading));
  // A plain read of the key being loaded is a miss, not another key's reply.
  const auto during = reader_cache->Get<std::string>(key);
  INFO(during.status().ToString());
  CHECK(during.miss());
  release = true;
  winner.join();
  CHECK(winner_value == "loaded");
  CHECK(reader_cache->Get<std::string>(key).value_or("") == "loaded");
  const Metrics m = winner_cache->metrics();
  CHECK(m[static_cast<std::size_t>(CacheOp::kGetOrCompute)].errors == 0);
}

}  // namespace cachet::test
