// The memory store's admission policy: the frequency sketch on its own, then
// `policy = tinylfu` deciding whether a new item may evict the CLOCK victim,
// beside `policy = lru`, which always lets it: without a window (the new item
// is judged as it arrives) and with W-TinyLFU's window (new items enter it and
// are judged as they leave it). Each test would fail if admission admitted
// everything, or nothing, or if the window were not there.
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../../plugins/memory/frequency_sketch.h"
#include "cachet/cache.h"
#include "cachet/config.h"

using cachet::Cache;
using cachet::Config;
using cachet::memory::FrequencySketch;

namespace {

std::unique_ptr<Cache> OpenMemory(const std::string& memory_section) {
  auto config = Config::Parse("[cache]\nbackend = memory\n[memory]\n" + memory_section,
                              "memory-policy-test.conf");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

std::map<std::string, std::string> StatsOf(Cache& cache) {
  auto stats = cache.Stats();
  REQUIRE(stats.ok());
  return {stats->begin(), stats->end()};
}

// A well-mixed 64-bit hash for key number `i`, as the store's would be.
std::uint64_t HashOf(std::uint64_t i) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 31);
}

// 60 items of 1000 bytes fit in one shard of 64 KiB.
const char* const kSmallShard = "max_bytes = 65536\nshards = 1\n";
// TinyLFU judging each new item as it arrives: no window.
const char* const kNoWindow = "policy = tinylfu\nwindow_percent = 0\n";
// TinyLFU with its default window: 1 % of 64 KiB holds one item of 1000 bytes.
const char* const kWindow = "policy = tinylfu\n";

}  // namespace

TEST_CASE("frequency sketch counts accesses and saturates at 15", "[memory][policy]") {
  FrequencySketch sketch(1024);
  CHECK(sketch.Estimate(HashOf(1)) == 0);
  for (int i = 0; i < 5; ++i) sketch.Record(HashOf(1));
  CHECK(sketch.Estimate(HashOf(1)) == 5);
  for (int i = 0; i < 40; ++i) sketch.Record(HashOf(2));
  CHECK(sketch.Estimate(HashOf(2)) == FrequencySketch::kMaxCount);
  CHECK(sketch.Estimate(HashOf(1)) == 5);  // another key's accesses did not leak in
}

TEST_CASE("frequency sketch keeps most keys apart", "[memory][policy]") {
  FrequencySketch sketch(1024);
  for (std::uint64_t k = 0; k < 512; ++k) sketch.Record(HashOf(k));
  int exact = 0;
  for (std::uint64_t k = 0; k < 512; ++k) exact += sketch.Estimate(HashOf(k)) == 1 ? 1 : 0;
  CHECK(exact >= 480);  // a count-min sketch only overestimates, and rarely at half load
  CHECK(sketch.Estimate(HashOf(100000)) <= 1);
}

TEST_CASE("frequency sketch halves every count after its sample", "[memory][policy]") {
  FrequencySketch sketch(4096);
  REQUIRE(sketch.sample() == 40960);
  for (int i = 0; i < 12; ++i) sketch.Record(HashOf(7));
  // Distinct keys bring the count of accesses to one short of the sample.
  for (std::uint64_t k = 1000; k < 200000 && sketch.additions() + 1 < sketch.sample(); ++k) {
    sketch.Record(HashOf(k));
  }
  REQUIRE(sketch.additions() + 1 == sketch.sample());
  CHECK_FALSE(sketch.AgeIfDue());  // not yet due
  for (std::uint64_t k = 500000; k < 600000 && sketch.additions() < sketch.sample(); ++k) {
    sketch.Record(HashOf(k));
  }
  const int before = sketch.Estimate(HashOf(7));
  CHECK(before >= 12);
  REQUIRE(sketch.AgeIfDue());
  CHECK(sketch.Estimate(HashOf(7)) == before / 2);
  CHECK(sketch.additions() == 0);
}

TEST_CASE("frequency sketch grows and keeps every estimate", "[memory][policy]") {
  FrequencySketch sketch(64, 4096);
  // No reader here: the old counters can go at once.
  auto grow = [&](std::size_t keys) {
    std::unique_ptr<cachet::memory::RetiredArray> old(sketch.Grow(keys));
    return old != nullptr;
  };
  REQUIRE(sketch.width() == 64);
  for (std::uint64_t k = 0; k < 40; ++k) {
    for (std::uint64_t i = 0; i <= k % 9; ++i) sketch.Record(HashOf(k));
  }
  std::vector<int> before;
  for (std::uint64_t k = 0; k < 40; ++k) before.push_back(sketch.Estimate(HashOf(k)));
  REQUIRE(grow(1000));
  CHECK(sketch.width() == 1024);
  for (std::uint64_t k = 0; k < 40; ++k) CHECK(sketch.Estimate(HashOf(k)) == before[k]);
  CHECK(grow(100000));
  CHECK(sketch.width() == 4096);  // no wider than its most
  CHECK_FALSE(grow(100000));
}

TEST_CASE("memory rejects a policy it does not know", "[memory][policy]") {
  auto config =
      Config::Parse("[cache]\nbackend = memory\n[memory]\npolicy = mru\n", "memory-policy.conf");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().message().find("policy") != std::string::npos);
  CHECK(cache.status().message().find("lru|tinylfu") != std::string::npos);
}

TEST_CASE("tinylfu keeps the read items through a scan that lru lets flush them",
          "[memory][policy]") {
  const std::string value(1000, 'v');
  // `judged_at_the_door`: tinylfu without its window (window_percent = 0).
  auto run = [&](const std::string& policy, bool judged_at_the_door = false) {
    auto cache = OpenMemory(std::string(kSmallShard) + "policy = " + policy + "\n" +
                            (judged_at_the_door ? "window_percent = 0\n" : ""));
    for (int i = 0; i < 30; ++i) REQUIRE(cache->Set("hot" + std::to_string(i), value).ok());
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 30; ++i) REQUIRE(cache->Get("hot" + std::to_string(i)).hit());
    }
    // A scan: 300 keys written once and never read (tinylfu without a window
    // refuses most: not_stored; with one, they pass through the window and lose).
    for (int i = 0; i < 300; ++i) {
      const cachet::Status s = cache->Set("scan" + std::to_string(i), value);
      REQUIRE((s.ok() || (judged_at_the_door && s.IsNotStored())));
    }
    int kept = 0;
    for (int i = 0; i < 30; ++i) kept += cache->Get("hot" + std::to_string(i)).hit() ? 1 : 0;
    return std::pair{kept, StatsOf(*cache)};
  };
  auto [lru_kept, lru_stats] = run("lru");
  CHECK(lru_kept == 0);  // each read bought one second chance, and the scan used them up
  CHECK(lru_stats["rejected"] == "0");
  CHECK(lru_stats["policy"] == "lru");

  for (const bool judged_at_the_door : {true, false}) {
    INFO("without a window: " << judged_at_the_door);
    auto [tiny_kept, tiny_stats] = run("tinylfu", judged_at_the_door);
    CHECK(tiny_kept == 30);
    CHECK(std::stoull(tiny_stats["rejected"]) >= 250);  // the scan's keys, once it was full
    CHECK(tiny_stats["policy"] == "tinylfu");
    CHECK(std::stoull(tiny_stats["sketch_bytes"]) > 0);
    CHECK(std::stoull(tiny_stats["bytes"]) <= 65536);
  }
}

TEST_CASE("tinylfu admits a new item asked for more often than the victim, and only then",
          "[memory][policy]") {
  auto cache = OpenMemory(std::string(kSmallShard) + kNoWindow);
  const std::string value(1000, 'v');
  // Fills the shard with items written once; once full, more of them are refused.
  for (int i = 0; i < 100; ++i) {
    const cachet::Status s = cache->Set("cold" + std::to_string(i), value);
    REQUIRE((s.ok() || s.IsNotStored()));
  }
  auto full = StatsOf(*cache);
  REQUIRE(std::stoull(full["rejected"]) > 0);
  REQUIRE(cache->Get("cold0").hit());  // the first ones stayed

  // Wanted: missed five times before it is written, as a cache-aside reader would.
  for (int i = 0; i < 5; ++i) REQUIRE(cache->Get("wanted").miss());
  REQUIRE(cache->Set("wanted", value).ok());
  CHECK(cache->Get("wanted").hit());

  // Once-only: no more wanted than the victims, so it does not displace one,
  // and the writer is told so: not_stored, not ok.
  auto before = StatsOf(*cache);
  CHECK(cache->Set("once", value).IsNotStored());
  CHECK(cache->Get("once").miss());
  auto after = StatsOf(*cache);
  CHECK(std::stoull(after["rejected"]) == std::stoull(before["rejected"]) + 1);
  // A refused item was never an item: not counted, no eviction for it.
  CHECK(after["total_items"] == before["total_items"]);
  CHECK(after["evictions"] == before["evictions"]);
  CHECK(after["items"] == before["items"]);
}

TEST_CASE("tinylfu never refuses an add: two claims of one key, exactly one wins",
          "[memory][policy]") {
  auto cache = OpenMemory(std::string(kSmallShard) + kNoWindow);
  const std::string value(1000, 'v');
  // A full shard of items read often, so any judged newcomer would lose.
  for (int i = 0; i < 70; ++i) (void)cache->Set("hot" + std::to_string(i), value);
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 70; ++i) (void)cache->Get("hot" + std::to_string(i));
  }
  REQUIRE(cache->Set("judged", value).IsNotStored());  // a set is judged, and loses
  // An add is a claim (a lock, GetOrCompute's lease), not a cache fill: it is
  // stored; a second add of the same key sees the first and is not_stored.
  CHECK(cache->Add("lock", value).ok());
  CHECK(cache->Add("lock", value).IsNotStored());
  auto got = cache->Get("lock");
  REQUIRE(got.hit());
  CHECK(got.value() == value);
}

TEST_CASE("tinylfu: a refused set is never visible, and a victim survives it",
          "[memory][policy]") {
  auto cache = OpenMemory(std::string(kSmallShard) + kNoWindow);
  const std::string value(1000, 'v');
  for (int i = 0; i < 50; ++i) REQUIRE(cache->Set("hot" + std::to_string(i), value).ok());
  for (int i = 0; i < 20; ++i) (void)cache->Set("fill" + std::to_string(i), value);  // now full
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 50; ++i) REQUIRE(cache->Get("hot" + std::to_string(i)).hit());
  }
  auto before = StatsOf(*cache);
  for (int i = 0; i < 20; ++i) {
    CHECK(cache->Set("new" + std::to_string(i), value).IsNotStored());
  }
  auto after = StatsOf(*cache);
  // Judged before anything was evicted or published: the resident items stay.
  CHECK(after["evictions"] == before["evictions"]);
  CHECK(after["items"] == before["items"]);
  CHECK(after["total_items"] == before["total_items"]);
  CHECK(std::stoull(after["reclaiming_bytes"]) == std::stoull(before["reclaiming_bytes"]));
  for (int i = 0; i < 50; ++i) CHECK(cache->Get("hot" + std::to_string(i)).hit());
}

TEST_CASE("tinylfu lets an overwrite of a present key through without judging it",
          "[memory][policy]") {
  auto cache = OpenMemory(std::string(kSmallShard) + kNoWindow);
  const std::string value(1000, 'v');
  // Fills the shard to its budget (later keys are refused), then reads every
  // present key until its count saturates (15): a judged overwrite would tie
  // with any victim and lose.
  std::vector<std::string> present;
  for (int i = 0; i < 100; ++i) {
    const std::string key = "k" + std::to_string(i);
    if (cache->Set(key, value).ok()) present.push_back(key);
  }
  REQUIRE(std::stoull(StatsOf(*cache)["rejected"]) > 0);  // full
  for (int round = 0; round < 16; ++round) {
    for (const auto& key : present) REQUIRE(cache->Get(key).hit());
  }
  const std::string rejected = StatsOf(*cache)["rejected"];
  // A slightly larger value each time, so every overwrite has to evict to fit.
  const std::string bigger(1010, 'w');
  int overwritten = 0;
  for (const auto& key : present) {
    if (!cache->Get(key).hit()) continue;  // evicted by an earlier overwrite
    REQUIRE(cache->Set(key, bigger).ok());
    auto got = cache->Get(key);
    REQUIRE(got.hit());
    CHECK(got.value() == bigger);
    ++overwritten;
  }
  CHECK(overwritten >= 40);
  CHECK(StatsOf(*cache)["rejected"] == rejected);
}

TEST_CASE("memory reports what an item costs beyond its key and value", "[memory]") {
  auto cache = OpenMemory("");
  for (int i = 0; i < 10; ++i) {
    REQUIRE(cache->Set("key" + std::to_string(i), std::string(90, 'v')).ok());
  }
  auto stats = StatsOf(*cache);
  const std::uint64_t overhead = std::stoull(stats["overhead_per_item"]);
  CHECK(overhead > 0);
  // Every item has a 4-byte key and a 90-byte value: what `bytes` and the table
  // hold beyond them is the overhead (rounded down per item).
  const std::uint64_t beyond =
      std::stoull(stats["bytes"]) + std::stoull(stats["table_bytes"]) - 10 * (4 + 90);
  CHECK(beyond / 10 == overhead);

  // A flush forgets the keys and values too: one item left, its bytes are its
  // key, its value and its overhead.
  REQUIRE(cache->Flush().ok());
  REQUIRE(cache->Set("again", std::string(50, 'v')).ok());
  auto after = StatsOf(*cache);
  CHECK(std::stoull(after["curr_items"]) == 1);
  CHECK(std::stoull(after["bytes"]) + std::stoull(after["table_bytes"]) ==
        5 + 50 + std::stoull(after["overhead_per_item"]));
}

TEST_CASE("memory spends at most 42 bytes per item of 16 + 100 bytes", "[memory]") {
  // 16-byte keys and 100-byte values, as the benchmark writes them, checked
  // every 37 items from 1,000 (below, the first 64 slots weigh on few items) to
  // 30,000, so every table size from just after a growth to just before the
  // next one is seen. 42, not the 48 asked for: a table that doubled would
  // leave 46 just after a growth, and this bound is there to catch that.
  auto cache = OpenMemory("shards = 1\n");
  std::uint64_t worst = 0;
  for (int i = 0; i < 30000; ++i) {
    char key[17];
    std::snprintf(key, sizeof(key), "key:%012d", i);
    REQUIRE(cache->Set(key, std::string(100, 'v')).ok());
    if (i < 1000 || i % 37 != 0) continue;
    auto stats = StatsOf(*cache);
    REQUIRE(std::stoull(stats["curr_items"]) == static_cast<std::uint64_t>(i + 1));
    worst = std::max<std::uint64_t>(worst, std::stoull(stats["overhead_per_item"]));
  }
  INFO("the most overhead_per_item seen: " << worst);
  CHECK(worst <= 42);
}

namespace {

// Key number `i` of a churn: 16 bytes, as cachet-bench's memory_churn writes them.
std::string ChurnKey(std::uint64_t i) {
  char key[17];
  std::snprintf(key, sizeof(key), "churn:%010llu", static_cast<unsigned long long>(i));
  return key;
}

// A value size from 32 bytes to 16 KiB, log-uniform, from the random `r`.
std::size_t ChurnSize(std::uint64_t r) {
  const double unit = static_cast<double>(r >> 11) * 0x1.0p-53;
  return static_cast<std::size_t>(32.0 * std::pow(512.0, unit));
}

}  // namespace

TEST_CASE("memory spends at most 48 bytes per item under a churn of mixed sizes", "[memory]") {
  // Values of 32 B to 16 KiB under 16-byte keys, as memory_churn writes them:
  // the allocator's rounding and its whole free chunks count, and so do the
  // table's slots at whatever load the item count leaves them. First filled
  // without eviction, checked every 50 items (every table size), then churned
  // through a full store three times over with new keys and overwrites.
  auto cache = OpenMemory("shards = 1\nmax_bytes = 16777216\n");
  std::uint64_t random = 42;
  const std::string text(16384, 'v');
  std::uint64_t worst_fill = 0;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    REQUIRE(cache->Set(ChurnKey(i), std::string_view(text).substr(0, ChurnSize(HashOf(++random))))
                .ok());
    if (i < 500 || i % 50 != 0) continue;  // a few hundred items first, for a fair average
    worst_fill =
        std::max<std::uint64_t>(worst_fill, std::stoull(StatsOf(*cache)["overhead_per_item"]));
  }
  REQUIRE(std::stoull(StatsOf(*cache)["evictions"]) == 0);
  std::uint64_t worst_churn = 0;
  std::size_t written = 0;
  for (int n = 0; written < 3 * 16777216; ++n) {
    const std::size_t size = ChurnSize(HashOf(++random));
    REQUIRE(cache->Set(ChurnKey(HashOf(++random) % 40000), std::string_view(text).substr(0, size))
                .ok());
    written += size;
    if (n % 500 != 0) continue;
    worst_churn =
        std::max<std::uint64_t>(worst_churn, std::stoull(StatsOf(*cache)["overhead_per_item"]));
  }
  auto stats = StatsOf(*cache);
  CHECK(std::stoull(stats["evictions"]) > 4000);
  INFO("the most overhead_per_item seen: filling " << worst_fill << ", churning " << worst_churn);
  CHECK(worst_fill <= 48);
  CHECK(worst_churn <= 48);
}

TEST_CASE("tinylfu readers bump the sketch beside writers that age it", "[memory][policy][threads]") {
  // A 64 KiB shard gives a 1024-counter-wide sketch that ages every 10240
  // accesses; 4000 distinct keys keep the writer storing, refusing, evicting
  // and aging while the readers look the same keys up (for TSan).
  auto cache = OpenMemory("max_bytes = 65536\nshards = 1\npolicy = tinylfu\n");
  constexpr int kKeys = 4000;
  constexpr int kOps = 40000;
  std::atomic<bool> failed{false};
  std::atomic<bool> writing{true};
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      // At least kOps reads, and on while the writer writes (bounded): on a busy
      // machine the readers could otherwise be done before the first write.
      for (int i = 0; i < kOps || (writing.load() && i < 100 * kOps); ++i) {
        const std::string key = "k" + std::to_string((i * 7 + t * 13) % kKeys);
        auto got = cache->Get(key);
        if (got.hit()) {
          hits.fetch_add(1, std::memory_order_relaxed);
          if (got.value() != key) failed = true;
        }
      }
    });
  }
  for (int i = 0; i < kOps; ++i) {
    const std::string key = "k" + std::to_string((i * 11) % kKeys);
    const cachet::Status s = cache->Set(key, key);
    if (!s.ok() && !s.IsNotStored()) failed = true;
  }
  writing = false;
  for (auto& thread : threads) thread.join();
  CHECK_FALSE(failed);
  CHECK(hits.load() > 0);  // the readers met the writer's items
  auto stats = StatsOf(*cache);
  CHECK(std::stoull(stats["bytes"]) <= 65536);
  CHECK(std::stoull(stats["evictions"]) + std::stoull(stats["rejected"]) > 0);
}

TEST_CASE("tinylfu's window admits a burst of a new key that the sketch alone refuses",
          "[memory][policy]") {
  const std::string value(1000, 'v');
  // A full shard of items each read five times; then a new key is written once
  // and read at once, ten times (a burst: a new story, a new session).
  auto run = [&](const char* policy) {
    auto cache = OpenMemory(std::string(kSmallShard) + policy);
    for (int i = 0; i < 70; ++i) (void)cache->Set("hot" + std::to_string(i), value);
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 70; ++i) (void)cache->Get("hot" + std::to_string(i));
    }
    const cachet::Status stored = cache->Set("burst", value);
    int hits = 0;
    for (int i = 0; i < 10; ++i) hits += cache->Get("burst").hit() ? 1 : 0;
    // Keys written once push "burst" out of the window: it competes then.
    for (int i = 0; i < 5; ++i) (void)cache->Set("once" + std::to_string(i), value);
    return std::tuple{stored, hits, cache->Get("burst").hit(), StatsOf(*cache)};
  };
  // Without a window the burst's key is judged on its first write, having been
  // asked for once: it loses to the residents, and every read of it misses.
  auto [judged, judged_hits, judged_kept, judged_stats] = run(kNoWindow);
  CHECK(judged.IsNotStored());
  CHECK(judged_hits == 0);
  CHECK_FALSE(judged_kept);

  // With the window it is stored, its reads hit while it is there, and they
  // count: when it leaves the window it is asked for more often than the
  // CLOCK victim, so it stays; the keys written once lose instead.
  auto [windowed, windowed_hits, windowed_kept, windowed_stats] = run(kWindow);
  CHECK(windowed.ok());
  CHECK(windowed_hits == 10);
  CHECK(windowed_kept);
  CHECK(std::stoull(windowed_stats["rejected"]) >= 4);  // "once0".."once3" left and lost
  CHECK(windowed_stats["window_items"] == "1");          // "once4"
  CHECK(judged_stats["window_items"] == "0");
}

TEST_CASE("tinylfu's window keeps its share of the shard and its count", "[memory][policy]") {
  // One shard of 1 MiB with a 10 % window: 104,857 bytes, about 100 items of 1000 bytes.
  auto cache = OpenMemory("max_bytes = 1048576\nshards = 1\npolicy = tinylfu\nwindow_percent = 10\n");
  const std::string value(1000, 'v');
  constexpr std::uint64_t kLimit = 1048576 / 100 * 10;
  for (int i = 0; i < 50; ++i) REQUIRE(cache->Set("a" + std::to_string(i), value).ok());
  auto stats = StatsOf(*cache);
  CHECK(stats["window_items"] == "50");  // every new item entered the window
  const std::uint64_t fifty = std::stoull(stats["window_bytes"]);
  CHECK(fifty >= 50 * 1000);
  CHECK(fifty == std::stoull(stats["bytes"]));  // so far it holds every item

  for (int i = 0; i < 200; ++i) REQUIRE(cache->Set("b" + std::to_string(i), value).ok());
  stats = StatsOf(*cache);
  const std::uint64_t items = std::stoull(stats["window_items"]);
  CHECK(std::stoull(stats["window_bytes"]) <= kLimit);  // the oldest left for the main space
  CHECK(items >= 90);
  CHECK(items <= 101);
  CHECK(stats["curr_items"] == "250");  // not full: they left unjudged
  CHECK(stats["rejected"] == "0");

  // A removed window item leaves the window's count; a rewritten one stays,
  // with its new size.
  REQUIRE(cache->Remove("b199").ok());
  CHECK(std::stoull(StatsOf(*cache)["window_items"]) == items - 1);
  const std::uint64_t before = std::stoull(StatsOf(*cache)["window_bytes"]);
  REQUIRE(cache->Set("b198", std::string(2000, 'w')).ok());
  stats = StatsOf(*cache);
  CHECK(std::stoull(stats["window_items"]) == items - 1);
  // Its chunk grew from about 1040 to about 2032 bytes.
  CHECK(std::stoull(stats["window_bytes"]) > before + 900);
  CHECK(std::stoull(stats["window_bytes"]) <= before + 1000);
  auto got = cache->Get("b198");
  REQUIRE(got.hit());
  CHECK(got.value() == std::string(2000, 'w'));
  // Rewriting one window item many times keeps it there, and the count right.
  for (int i = 0; i < 5000; ++i) REQUIRE(cache->Set("b198", std::to_string(i)).ok());
  stats = StatsOf(*cache);
  CHECK(std::stoull(stats["window_items"]) == items - 1);
  CHECK(std::stoull(stats["window_bytes"]) < before);
  REQUIRE(cache->Flush().ok());
  stats = StatsOf(*cache);
  CHECK(stats["window_items"] == "0");
  CHECK(stats["window_bytes"] == "0");
  REQUIRE(cache->Set("after", value).ok());
  CHECK(StatsOf(*cache)["window_items"] == "1");
}

TEST_CASE("memory refuses a window_percent beside policy lru", "[memory][policy]") {
  for (const char* policy : {"", "policy = lru\n"}) {
    auto config = Config::Parse(std::string("[cache]\nbackend = memory\n[memory]\n") + policy +
                                    "window_percent = 5\n",
                                "memory-policy.conf");
    REQUIRE(config.ok());
    auto cache = Cache::Open(std::move(config).value());
    REQUIRE_FALSE(cache.ok());
    INFO(cache.status().ToString());
    CHECK(cache.status().IsConfigError());
    CHECK(cache.status().message().find("memory-policy.conf:") != std::string::npos);
    CHECK(cache.status().message().find("window_percent = 5: applies to policy = tinylfu only") !=
          std::string::npos);
  }
}

TEST_CASE("memory refuses a window_percent out of range", "[memory][policy]") {
  auto config = Config::Parse("[cache]\nbackend = memory\n[memory]\npolicy = tinylfu\n"
                              "window_percent = 51\n",
                              "memory-policy.conf");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().message().find("window_percent") != std::string::npos);
}
