// Conformance: multi-key calls, and the store under several threads at once.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

TEST_CASE("set_multi then get_multi with misses keeps the key order", "[conformance][multi]") {
  Cache& cache = SharedCache();
  const std::string prefix = UniqueKey("multi");
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < 20; ++i) {
    entries.emplace_back(prefix + ":" + std::to_string(i), "value-" + std::to_string(i));
  }
  for (const Status& s : cache.SetMulti(entries)) CHECK(Ok(s));

  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) {
    keys.push_back(entries[i].first);
    keys.push_back(prefix + ":absent:" + std::to_string(i));
  }
  auto found = cache.GetMulti(keys);
  REQUIRE(found.size() == keys.size());
  for (int i = 0; i < 20; ++i) {
    INFO(keys[2 * i] << ": " << found[2 * i].status().ToString());
    CHECK(found[2 * i].value_or("") == entries[i].second);
    CHECK(found[2 * i + 1].miss());
  }
}

TEST_CASE("get_multi of typed values decodes each", "[conformance][multi]") {
  Cache& cache = SharedCache();
  const std::string a = UniqueKey("multi-int");
  const std::string b = UniqueKey("multi-int");
  REQUIRE(
      cache.SetMulti(std::vector<std::pair<std::string, std::int64_t>>{{a, -1}, {b, 2}}).size() ==
      2);
  auto found = cache.GetMulti<std::int64_t>({a, b});
  CHECK(found[0].value_or(0) == -1);
  CHECK(found[1].value_or(0) == 2);
}

TEST_CASE("remove_multi removes present keys and reports absent ones", "[conformance][multi]") {
  Cache& cache = SharedCache();
  const std::string present = UniqueKey("rm-multi");
  const std::string absent = UniqueKey("rm-multi");
  REQUIRE(Ok(cache.Set(present, std::string("v"))));
  auto removed = cache.RemoveMulti({present, absent});
  REQUIRE(removed.size() == 2);
  CHECK(Ok(removed[0]));
  CHECK(removed[1].IsNotFound());
  CHECK(cache.Get(present).miss());
}

TEST_CASE("an empty multi call is an empty answer", "[conformance][multi]") {
  Cache& cache = SharedCache();
  CHECK(cache.GetMulti({}).empty());
  CHECK(cache.RemoveMulti({}).empty());
}

TEST_CASE("several threads read and write and count at once", "[conformance][threads]") {
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  Cache& cache = SharedCache();
  const bool counters = Supports(Capability::kCounters);
  const std::string counter = UniqueKey("threads-counter");
  REQUIRE(Ok(cache.Set(counter, std::string("0"))));
  const std::string prefix = UniqueKey("threads");

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = prefix + ":" + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        const std::string value = std::to_string(t) + "/" + std::to_string(i);
        if (!cache.Set(own, value).ok()) ++failures;
        if (cache.Get(own).value_or("") != value) ++failures;
        if (counters && !cache.Incr(counter).ok()) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  CHECK(failures.load() == 0);
  if (counters) CHECK(cache.Get<std::uint64_t>(counter).value_or(0) == kThreads * kRounds);
}

}  // namespace
}  // namespace cachet::conformance
