// The memory store under threads: reads take no lock, so these tests run readers
// beside writers that overwrite, grow, remove and flush, and check that a reader
// only ever sees whole values that were written, never misses a key that is
// there, and that unlinked entries are given back. Run under ASan (the sanitizer
// preset), a read of a freed entry fails them outright.
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"

using cachet::Cache;
using cachet::Config;

namespace {

std::unique_ptr<Cache> OpenMemory(const std::string& memory_section) {
  auto config = Config::Parse("[cache]\nbackend = memory\nmetrics = false\n[memory]\n" +
                                  memory_section,
                              "memory-concurrency-test.conf");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

// A value that proves itself whole: "<key>/<round>/" followed by `round % 300`
// copies of the round's last digit, so lengths vary (entries are rebuilt at new
// sizes) and a torn read (two rounds mixed) cannot pass Whole().
std::string ValueFor(const std::string& key, int round) {
  const char digit = static_cast<char>('0' + round % 10);
  return key + "/" + std::to_string(round) + "/" + std::string(round % 300, digit);
}

bool Whole(const std::string& key, const std::string& value) {
  const std::string prefix = key + "/";
  if (value.compare(0, prefix.size(), prefix) != 0) return false;
  const std::size_t slash = value.find('/', prefix.size());
  if (slash == std::string::npos) return false;
  const int round = std::stoi(value.substr(prefix.size(), slash - prefix.size()));
  return value == ValueFor(key, round);
}

std::string KeyName(int i) { return "key-" + std::to_string(i); }

// Holds each thread until all `count` have arrived, so they really run together
// (bounded: after enough yields a thread goes on alone).
void WaitForAll(std::atomic<int>& arrived, int count) {
  ++arrived;
  for (int spin = 0; spin < 1000000 && arrived.load() < count; ++spin) std::this_thread::yield();
}

std::uint64_t StatOf(Cache& cache, const std::string& name) {
  auto stats = cache.Stats();
  REQUIRE(stats.ok());
  for (const auto& [key, value] : *stats) {
    if (key == name) return std::stoull(value);
  }
  FAIL("no statistic " << name);
  return 0;
}

}  // namespace

TEST_CASE("memory readers see whole values while writers rewrite, remove and flush",
          "[memory][threads]") {
  auto cache = OpenMemory("shards = 2\n");
  constexpr int kKeys = 64;
  constexpr int kRounds = 3000;
  std::atomic<int> torn{0};
  std::atomic<int> hits{0};
  std::atomic<bool> writing{true};
  std::atomic<int> arrived{0};
  for (int i = 0; i < kKeys; ++i) REQUIRE(cache->Set(KeyName(i), ValueFor(KeyName(i), i)).ok());

  auto writer = [&](int first_round) {
    WaitForAll(arrived, 4);
    for (int round = first_round; round < kRounds; round += 2) {
      const std::string key = KeyName(round % kKeys);
      if (round % 97 == 0) {
        (void)cache->Remove(key);
      } else if (round == kRounds / 2 + 1) {
        (void)cache->Flush();
      } else {
        (void)cache->Set(key, ValueFor(key, round));
      }
    }
  };
  auto reader = [&] {
    WaitForAll(arrived, 4);
    // Bounded: at most this many passes, fewer if the writers finish first.
    for (int pass = 0; pass < 400 && (pass < 20 || writing.load()); ++pass) {
      for (int i = 0; i < kKeys; ++i) {
        const std::string key = KeyName(i);
        auto found = cache->Get(key);
        if (!found.hit()) continue;
        ++hits;
        if (!Whole(key, *found)) ++torn;
      }
    }
  };

  std::vector<std::thread> threads;
  threads.emplace_back(writer, 0);
  threads.emplace_back(writer, 1);
  threads.emplace_back(reader);
  threads.emplace_back(reader);
  threads[0].join();
  threads[1].join();
  writing = false;
  threads[2].join();
  threads[3].join();

  CHECK(torn.load() == 0);
  CHECK(hits.load() > 0);
  // After the writers, every key holds the last value written to it, whole.
  for (int i = 0; i < kKeys; ++i) {
    auto found = cache->Get(KeyName(i));
    if (found.hit()) CHECK(Whole(KeyName(i), *found));
  }
}

TEST_CASE("memory readers see whole items while writers rewrite them in place",
          "[memory][threads]") {
  // Values of one size, so every overwrite and counter step rewrites its entry
  // in place: a reader must get the value, flags and CAS of one write, never a
  // mix. Values of 2 KiB keep each write long enough for readers to overlap it.
  auto cache = OpenMemory("shards = 1\n");
  cachet::Backend& store = cache->backend();
  constexpr int kKeys = 8;
  constexpr int kRounds = 30000;
  auto value_of = [](int key, int round) {
    char head[32];
    std::snprintf(head, sizeof head, "%d/%08d/", key, round);
    return std::string(head) + std::string(2048, static_cast<char>('a' + round % 26));
  };
  auto round_of = [&](int key, const cachet::Item& item) {
    // The round the value names, or -1 when value and flags disagree or it is torn.
    const int round = static_cast<int>(item.flags);
    return item.value == value_of(key, round) ? round : -1;
  };
  for (int k = 0; k < kKeys; ++k) {
    REQUIRE(store.Store(cachet::StoreMode::kSet, KeyName(k), cachet::ItemView(value_of(k, 0), 0),
                        cachet::WriteOptions{})
                .ok());
  }
  REQUIRE(cache->Set("counter", std::string("1000000")).ok());
  const std::uint64_t items_before = StatOf(*cache, "total_items");
  std::atomic<int> torn{0};
  std::atomic<int> backwards{0};
  std::atomic<int> wrong_cas{0};
  std::atomic<int> arrived{0};
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    WaitForAll(arrived, 3);
    for (int round = 1; round < kRounds; ++round) {
      const int k = round % kKeys;
      (void)store.Store(cachet::StoreMode::kSet, KeyName(k),
                        cachet::ItemView(value_of(k, round), static_cast<std::uint32_t>(round)),
                        cachet::WriteOptions{});
      std::uint64_t counter = 0;
      (void)store.Incr("counter", 1, &counter);
    }
    writing = false;
  });
  auto reader = [&] {
    WaitForAll(arrived, 3);
    // Per key: the last round seen and its CAS. One thread's tokens only grow,
    // so a later write has a larger token and the same write the same one.
    std::vector<int> last(kKeys, -1);
    std::vector<std::uint64_t> last_cas(kKeys, 0);
    std::uint64_t last_counter = 0;
    cachet::Item item;
    for (int pass = 0; pass < 400000 && (pass < 100 || writing.load()); ++pass) {
      const int k = pass % kKeys;
      if (!store.Gets(KeyName(k), &item).ok()) continue;
      const int round = round_of(k, item);
      if (round < 0) {
        ++torn;
      } else if (round < last[k]) {
        ++backwards;  // a reader never goes back to an older write
      } else if ((round == last[k]) != (item.cas == last_cas[k]) ||
                 (round > last[k] && item.cas < last_cas[k])) {
        ++wrong_cas;
      }
      if (round >= last[k]) {
        last[k] = round;
        last_cas[k] = item.cas;
      }
      if (store.Get("counter", &item).ok()) {
        const std::uint64_t counter = std::stoull(item.value);
        if (counter < last_counter) ++backwards;
        last_counter = counter;
      }
    }
  };
  std::thread reader1(reader);
  std::thread reader2(reader);
  writer.join();
  reader1.join();
  reader2.join();
  CHECK(torn.load() == 0);
  CHECK(backwards.load() == 0);
  CHECK(wrong_cas.load() == 0);
  cachet::Item item;
  REQUIRE(store.Gets(KeyName(1), &item).ok());
  CHECK(round_of(1, item) == (kRounds - 1) - (kRounds - 2) % kKeys);  // key 1's last round
  CHECK(cache->Get("counter").value_or("") == std::to_string(1000000 + kRounds - 1));
  // Every write was made in place: no entry was built after the first ones.
  CHECK(StatOf(*cache, "total_items") == items_before);
}

TEST_CASE("memory writes in place without the shard lock lose no update to locked writes",
          "[memory][threads]") {
  // Two threads add to one number by compare-and-swap, each rewriting it at a
  // width of its own choosing: a write that keeps the width rewrites the entry
  // in place holding the entry alone, one that changes it builds a new entry
  // under the shard's lock. Then two threads step a counter by incr across
  // 9 -> 10, 99 -> 100 and on (in place, then rebuilt) while a third touches it
  // under the lock. If the two ways ever met on one entry, two swaps would
  // succeed with one token, or a step would be lost, and a total would fall short.
  auto cache = OpenMemory("shards = 1\n");
  cachet::Backend& store = cache->backend();
  REQUIRE(cache->Set("sum", std::string("0")).ok());
  REQUIRE(cache->Set("steps", std::string("0")).ok());
  constexpr int kAdds = 100000;
  constexpr int kSteps = 200000;
  std::atomic<int> arrived{0};
  std::atomic<int> gave_up{0};
  auto adder = [&](int seed) {
    WaitForAll(arrived, 2);
    cachet::Item item;
    int done = 0;
    for (int tries = 0; done < kAdds && tries < 50 * kAdds; ++tries) {
      if (!store.Gets("sum", &item).ok()) continue;
      // Widths 6 and 7 by turns: the current value's width about half the time.
      char text[24];  // room for any long, so nothing is cut
      std::snprintf(text, sizeof text, "%0*ld", 6 + (seed + done) % 2, std::stol(item.value) + 1);
      cachet::ItemView view(text, 0);
      view.cas = item.cas;
      if (store.Store(cachet::StoreMode::kCas, "sum", view, cachet::WriteOptions{}).ok()) ++done;
    }
    if (done < kAdds) ++gave_up;
  };
  std::thread adder1(adder, 0);
  std::thread adder2(adder, 1);
  adder1.join();
  adder2.join();
  CHECK(gave_up.load() == 0);
  CHECK(std::stol(cache->Get("sum").value_or("-1")) == 2 * kAdds);

  arrived = 0;
  std::atomic<bool> running{true};
  auto stepper = [&] {
    WaitForAll(arrived, 3);
    std::uint64_t value = 0;
    for (int i = 0; i < kSteps; ++i) (void)store.Incr("steps", 1, &value);
  };
  std::thread toucher([&] {
    WaitForAll(arrived, 3);
    for (int i = 0; i < 10000000 && running.load(); ++i) (void)store.Touch("steps", cachet::Ttl(0));
  });
  std::thread stepper1(stepper);
  std::thread stepper2(stepper);
  stepper1.join();
  stepper2.join();
  running = false;
  toucher.join();
  CHECK(cache->Get("steps").value_or("") == std::to_string(2 * kSteps));
}

TEST_CASE("memory add and remove make a lock with one holder at a time", "[memory][threads]") {
  // Add under the shard's lock, remove in place without it, a set of the same
  // size reviving in place: if a removed entry ever read as present to add, or
  // an add were lost to a revival, two threads would hold the lock at once or
  // one would stop getting it.
  auto cache = OpenMemory("shards = 1\n");
  cachet::Backend& store = cache->backend();
  constexpr int kTurns = 20000;
  std::atomic<int> holders{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> arrived{0};
  std::atomic<int> taken{0};
  auto contender = [&](char who) {
    WaitForAll(arrived, 3);
    const std::string mine(16, who);
    for (int turn = 0, tries = 0; turn < kTurns && tries < 200 * kTurns; ++tries) {
      if (!store.Store(cachet::StoreMode::kAdd, "lock", cachet::ItemView(mine),
                       cachet::WriteOptions{})
               .ok()) {
        continue;
      }
      if (holders.fetch_add(1) != 0) ++overlaps;
      cachet::Item item;
      if (!store.Get("lock", &item).ok() || item.value != mine) ++overlaps;
      holders.fetch_sub(1);
      if (!store.Remove("lock").ok()) ++overlaps;
      ++turn;
      ++taken;
    }
  };
  std::thread first(contender, 'a');
  std::thread second(contender, 'b');
  // A third thread sets and removes a key of the same shard, in place.
  std::thread other([&] {
    WaitForAll(arrived, 3);
    for (int i = 0; i < 4 * kTurns; ++i) {
      (void)store.Store(cachet::StoreMode::kSet, "other", cachet::ItemView(std::string(16, 'o')),
                        cachet::WriteOptions{});
      (void)store.Remove("other");
    }
  });
  first.join();
  second.join();
  other.join();
  CHECK(overlaps.load() == 0);
  CHECK(taken.load() == 2 * kTurns);
  CHECK(StatOf(*cache, "curr_items") == 0);
}

TEST_CASE("memory readers never miss a present key while the table grows", "[memory][threads]") {
  // One shard, so every insert grows the same table (1024 buckets at first,
  // doubled whenever entries outnumber them: several growths below).
  auto cache = OpenMemory("shards = 1\nmax_bytes = 268435456\n");
  constexpr int kStable = 50;
  for (int i = 0; i < kStable; ++i) REQUIRE(cache->Set("stable-" + std::to_string(i), "s").ok());
  std::atomic<bool> inserting{true};
  std::atomic<int> misses{0};
  std::atomic<int> reads{0};
  std::atomic<int> arrived{0};

  std::thread inserter([&] {
    WaitForAll(arrived, 2);
    for (int i = 0; i < 40000; ++i) (void)cache->Set(KeyName(i), "v");
    inserting = false;
  });
  std::thread reader([&] {
    WaitForAll(arrived, 2);
    for (int pass = 0; pass < 100000 && inserting.load(); ++pass) {
      const std::string key = "stable-" + std::to_string(pass % kStable);
      ++reads;
      if (!cache->Get(key).hit()) ++misses;
    }
  });
  inserter.join();
  reader.join();

  CHECK(misses.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(StatOf(*cache, "curr_items") == 40000 + kStable);
}

TEST_CASE("memory gives overwritten entries back once no reader holds them", "[memory]") {
  auto cache = OpenMemory("shards = 1\n");
  const std::string big(10000, 'b');
  for (int i = 0; i < 2000; ++i) REQUIRE(cache->Set("k", big + std::to_string(i)).ok());
  // 2000 rewrites retired ~20 MB; what still waits is a few blocks' worth.
  const std::uint64_t waiting = StatOf(*cache, "reclaiming_bytes");
  CHECK(waiting < 64 * big.size());
  CHECK(StatOf(*cache, "curr_items") == 1);
  CHECK(cache->Get("k").value_or("") == big + "1999");
}

TEST_CASE("memory gives a quiet store's retired entries back at a flush and at stats",
          "[memory]") {
  auto cache = OpenMemory("shards = 4\n");
  const std::string value(1000, 'v');
  for (int i = 0; i < 1000; ++i) REQUIRE(cache->Set("k" + std::to_string(i), value).ok());
  // Overwrites retire entries; with no more writes, stats() alone moves them on:
  // what is left are the one writing thread's spares (at most 64 KiB).
  for (int i = 0; i < 1000; ++i) REQUIRE(cache->Set("k" + std::to_string(i), value).ok());
  CHECK(StatOf(*cache, "reclaiming_bytes") <= (std::uint64_t{64} << 10));
  // A flush retires every item; no write follows, yet nothing is left waiting.
  REQUIRE(cache->Flush().ok());
  CHECK(StatOf(*cache, "reclaiming_bytes") == 0);
  CHECK(StatOf(*cache, "curr_items") == 0);
}

TEST_CASE("memory keeps a writing thread's spares within max_bytes / 512", "[memory]") {
  // A 1 MiB store: each thread's spares take 2 KiB at most, not the 64 KiB of a big store.
  auto cache = OpenMemory("max_bytes = 1048576\n");
  for (int round = 0; round < 3; ++round) {
    // A new size each round: an overwrite of the same size is made in place, retiring nothing.
    const std::string value(100 + 20 * round, 'v');
    for (int i = 0; i < 200; ++i) REQUIRE(cache->Set("k" + std::to_string(i), value).ok());
  }
  const std::uint64_t spares = StatOf(*cache, "reclaiming_bytes");
  CHECK(spares > 0);
  CHECK(spares <= 2048);
}

TEST_CASE("memory gives back at a flush what threads that ended had retired", "[memory][threads]") {
  // What a write unlinks waits in its own thread's limbo; the threads end with
  // theirs still holding entries, and a flush from another thread frees them all.
  auto cache = OpenMemory("shards = 4\n");
  const std::string value(1000, 'v');
  std::atomic<int> failed{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&cache, &value, &failed, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i % 50);
        if (!cache->Set(key, value + std::to_string(i)).ok()) ++failed;
      }
    });
  }
  for (auto& writer : writers) writer.join();
  CHECK(failed.load() == 0);
  CHECK(StatOf(*cache, "reclaiming_bytes") > 0);  // the spares, at least
  CHECK(StatOf(*cache, "curr_items") == 150);
  REQUIRE(cache->Flush().ok());
  CHECK(StatOf(*cache, "reclaiming_bytes") == 0);
  CHECK(StatOf(*cache, "curr_items") == 0);
}

TEST_CASE("memory with more writing threads than lanes keeps every value whole",
          "[memory][threads]") {
  // 40 threads (the store has 32 owned lanes and a shared one) overwrite and
  // remove 20 shared keys in 2 shards while readers check that every value read
  // is one that was written.
  auto cache = OpenMemory("shards = 2\n");
  constexpr int kWriters = 40;
  constexpr int kKeys = 20;
  std::atomic<int> torn{0};
  std::atomic<int> failed{0};
  std::atomic<int> arrived{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      WaitForAll(arrived, kWriters + 2);
      for (int round = 0; round < 300; ++round) {
        const std::string key = KeyName((t + round) % kKeys);
        const cachet::Status s = round % 7 == 0 ? cache->Remove(key)
                                                : cache->Set(key, ValueFor(key, t * 1000 + round));
        if (!s.ok() && !s.IsNotFound()) ++failed;
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      WaitForAll(arrived, kWriters + 2);
      for (int i = 0; i < 20000; ++i) {
        const std::string key = KeyName(i % kKeys);
        auto found = cache->Get(key);
        if (found.hit() && !Whole(key, *found)) ++torn;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(torn.load() == 0);
  CHECK(failed.load() == 0);
  REQUIRE(cache->Flush().ok());
  CHECK(StatOf(*cache, "reclaiming_bytes") == 0);
}

TEST_CASE("memory statistics and flushes beside writers reach every lane safely",
          "[memory][threads]") {
  // Writers use their own lanes without a lock; statistics and flushes reach
  // every lane while holding every shard's lock. ThreadSanitizer reports a lane
  // reached while its owner writes; ASan a spare or retired entry freed twice.
  auto cache = OpenMemory("shards = 4\n");
  constexpr int kKeys = 32;
  std::atomic<int> failed{0};
  std::atomic<int> arrived{0};
  auto writer = [&](int t) {
    WaitForAll(arrived, 3);
    for (int round = 0; round < 4000; ++round) {
      const std::string key = KeyName(t * kKeys + round % kKeys);
      const cachet::Status s =
          round % 5 == 0 ? cache->Remove(key) : cache->Set(key, ValueFor(key, round));
      if (!s.ok() && !s.IsNotFound()) ++failed;
    }
  };
  std::thread first(writer, 0);
  std::thread second(writer, 1);
  std::thread reporter([&] {
    WaitForAll(arrived, 3);
    for (int i = 0; i < 300; ++i) {
      if (!(i % 10 == 9 ? cache->Flush() : cache->Stats().status()).ok()) ++failed;
    }
  });
  first.join();
  second.join();
  reporter.join();
  CHECK(failed.load() == 0);
  for (int i = 0; i < 2 * kKeys; ++i) {
    auto found = cache->Get(KeyName(i));
    if (found.hit()) CHECK(Whole(KeyName(i), *found));
  }
  REQUIRE(cache->Flush().ok());
  CHECK(StatOf(*cache, "reclaiming_bytes") == 0);
}

TEST_CASE("memory counts hits and misses of every thread", "[memory][threads]") {
  auto cache = OpenMemory("");
  REQUIRE(cache->Set("here", "1").ok());
  // With the main thread, 33 threads hold numbers (each reads once and stays
  // alive), so every owned reader slot is taken and the two readers after them
  // count in the shared slot, at once, where a plain load and store instead of
  // an atomic add would lose counts.
  constexpr int kHolders = 32;
  constexpr int kReaders = 2;
  constexpr int kReads = 100000;
  std::latch numbered(kHolders);
  std::latch readers_done(1);
  std::atomic<int> arrived{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kHolders; ++t) {
    threads.emplace_back([&] {
      (void)cache->Get("here");
      numbered.count_down();
      readers_done.wait();
    });
  }
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&] {
      numbered.wait();
      WaitForAll(arrived, kReaders);
      for (int i = 0; i < kReads; ++i) {
        (void)cache->Get("here");
        (void)cache->Get("absent");
      }
    });
  }
  for (int t = kHolders; t < kHolders + kReaders; ++t) threads[t].join();
  readers_done.count_down();
  for (int t = 0; t < kHolders; ++t) threads[t].join();
  CHECK(StatOf(*cache, "get_hits") == kHolders + kReaders * kReads);
  CHECK(StatOf(*cache, "get_misses") == kReaders * kReads);
}

namespace {

// Reads and writes the store `calls` times from its thread's thread-local
// destructors, after it tells `started`.
struct StoreUseAtThreadExit {
  Cache* cache = nullptr;
  std::atomic<bool>* started = nullptr;
  int calls = 0;
  ~StoreUseAtThreadExit() {
    if (cache == nullptr) return;
    started->store(true);
    for (int i = 0; i < calls; ++i) {
      (void)cache->Get("here");
      (void)cache->Set("ending", ValueFor("ending", i));
    }
  }
};
thread_local StoreUseAtThreadExit store_use_at_thread_exit;

}  // namespace

TEST_CASE("memory: a thread using the store from its thread-local destructors shares no slot",
          "[memory][threads]") {
  auto cache = OpenMemory("");
  REQUIRE(cache->Set("here", "1").ok());
  constexpr int kCalls = 100000;
  std::atomic<bool> started{false};
  std::thread ending([&] {
    // Made before the thread takes its number, so destroyed after the number is
    // given back: the other thread takes it meanwhile, and owns its slot and lane.
    store_use_at_thread_exit.cache = cache.get();
    store_use_at_thread_exit.started = &started;
    store_use_at_thread_exit.calls = kCalls;
    (void)cache->Get("here");  // takes the number
  });
  std::thread using_freed_number([&] {
    // Bounded wait (10 s) for the other thread's destructor to start.
    for (int i = 0; i < 10000 && !started.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (int i = 0; i < kCalls; ++i) {
      (void)cache->Get("here");
      (void)cache->Set("using", ValueFor("using", i));
    }
  });
  ending.join();
  using_freed_number.join();
  REQUIRE(started.load());
  // Two threads counting in one owned slot with plain stores would lose hits;
  // writing through one lane without its lock, ThreadSanitizer reports them.
  CHECK(StatOf(*cache, "get_hits") == 2 * kCalls + 1);
  auto ending_value = cache->Get("ending");
  REQUIRE(ending_value.hit());
  CHECK(Whole("ending", *ending_value));
}

TEST_CASE("memory writers on many small shards borrow and give back within max_bytes",
          "[memory][threads]") {
  // 128 shards of a 2 MiB budget (16 KiB each) and values up to 100 KB: writes
  // keep borrowing, evicting and asking other shards for bytes while readers read.
  // Each writer gives 40 of the keys a big value, so even one writer alone (the
  // other may not have started) outgrows the budget and must evict.
  constexpr std::uint64_t kBudget = 2 << 20;
  auto cache = OpenMemory("shards = 128\nmax_bytes = 2097152\n");
  constexpr int kThreads = 4;
  constexpr int kKeys = 400;
  std::atomic<int> arrived{0};
  std::atomic<int> torn{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      WaitForAll(arrived, kThreads);
      for (int i = 0; i < 3000; ++i) {
        const std::string key = KeyName((i * 7 + t * 13) % kKeys);
        // Every 10th value is big: larger than a shard's share.
        std::string value = ValueFor(key, i);
        if (i % 10 == 0) value += std::string(100000, 'x');
        if (t % 2 == 0) {
          (void)cache->Set(key, value);
          if (i % 5 == 0) (void)cache->Remove(KeyName((i * 3) % kKeys));
        } else {
          auto got = cache->Get(key);
          if (got.hit() && !Whole(key, got->substr(0, got->find('x')))) ++torn;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(torn.load() == 0);
  // Each shard's items and table stay within what it borrowed; the credit of
  // all shards together never exceeds the budget.
  CHECK(StatOf(*cache, "bytes") + StatOf(*cache, "table_bytes") <= kBudget);
  CHECK(StatOf(*cache, "evictions") > 0);
}
