// Conformance: batch reads into the caller's buffers (Cache::GetItemsInto and
// Cache::GetMultiInto) answer what GetMulti answers, and reuse the buffers.
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

constexpr std::size_t kBigValue = 100 * 1024;

// `count` keys under a fresh prefix, each set to `value` followed by its index.
std::vector<std::string> StoreKeys(Cache& cache, std::string_view topic, std::size_t count,
                                   const std::string& value) {
  const std::string prefix = UniqueKey(topic);
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t i = 0; i < count; ++i) {
    entries.emplace_back(prefix + ":" + std::to_string(i), value + std::to_string(i));
  }
  for (const Status& s : cache.SetMulti(entries)) REQUIRE(Ok(s));
  std::vector<std::string> keys;
  for (auto& entry : entries) keys.push_back(std::move(entry.first));
  return keys;
}

std::vector<std::string_view> Views(const std::vector<std::string>& keys) {
  return std::vector<std::string_view>(keys.begin(), keys.end());
}

TEST_CASE("get_multi_into counts in metrics as one get_multi", "[conformance][into]") {
  Cache& cache = SharedCache();
  std::vector<std::string> keys = StoreKeys(cache, "into-metrics", 3, "v");
  keys.push_back(UniqueKey("into-metrics-absent"));
  const std::size_t get_multi = static_cast<std::size_t>(CacheOp::kGetMulti);
  const OpMetrics before = cache.metrics()[get_multi];
  std::vector<std::string> values;
  std::vector<Status> statuses;
  cache.GetMultiInto(Views(keys), &values, &statuses);
  const OpMetrics after = cache.metrics()[get_multi];
  CHECK(after.calls == before.calls + 1);
  CHECK(after.hits == before.hits + 3);
  CHECK(after.misses == before.misses + 1);
}

TEST_CASE("get_items_into answers what get_multi answers in key order", "[conformance][into]") {
  Cache& cache = SharedCache();
  std::vector<std::string> keys = StoreKeys(cache, "into", 10, "value-");
  // Misses between hits, and an empty key (an error of its own) in the middle.
  keys.insert(keys.begin() + 3, UniqueKey("into-absent"));
  keys.insert(keys.begin() + 6, "");
  keys.push_back(UniqueKey("into-absent"));

  const std::vector<Lookup<std::string>> expected = cache.GetMulti(keys);
  std::vector<Item> items;
  std::vector<Status> statuses;
  cache.GetItemsInto(Views(keys), &items, &statuses);
  std::vector<std::string> values;
  std::vector<Status> decoded;
  cache.GetMultiInto(Views(keys), &values, &decoded);

  REQUIRE(items.size() == keys.size());
  REQUIRE(values.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("key " << i << " '" << keys[i] << "': get_multi answered "
                << expected[i].status().ToString() << ", get_items_into "
                << statuses[i].ToString() << ", get_multi_into " << decoded[i].ToString());
    CHECK(statuses[i].code() == expected[i].status().code());
    CHECK(decoded[i].code() == expected[i].status().code());
    CHECK(values[i] == expected[i].value_or(""));
    if (expected[i].hit()) CHECK(items[i].value == expected[i].value());
    if (!expected[i].hit()) CHECK(items[i].value.empty());
  }
  CHECK(statuses[3].IsNotFound());
  CHECK(statuses[6].IsInvalidArgument());
  CHECK(statuses.back().IsNotFound());
}

TEST_CASE("a second read of same-size values reuses every buffer", "[conformance][into]") {
  Cache& cache = SharedCache();
  const std::vector<std::string> keys = StoreKeys(cache, "into-reuse", 8, BytePattern(kBigValue));
  std::vector<std::string> values;
  std::vector<Status> statuses;
  cache.GetMultiInto(Views(keys), &values, &statuses);
  // Each buffer gets a capacity no fresh string of the value would have, so a
  // string replaced (rather than written into) shows, even where the allocator
  // happens to hand the same address out again.
  std::vector<const char*> buffers;
  std::vector<std::size_t> capacities;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(Ok(statuses[i]));
    values[i].reserve(3 * kBigValue);
    buffers.push_back(values[i].data());
    capacities.push_back(values[i].capacity());
  }
  cache.GetMultiInto(Views(keys), &values, &statuses);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(Ok(statuses[i]));
    CHECK(values[i] == BytePattern(kBigValue) + std::to_string(i));
    CHECK(static_cast<const void*>(values[i].data()) == static_cast<const void*>(buffers[i]));
    CHECK(values[i].capacity() == capacities[i]);
  }
  // The raw Items keep theirs the same way.
  std::vector<Item> items;
  cache.GetItemsInto(Views(keys), &items, &statuses);
  for (Item& item : items) item.value.reserve(3 * kBigValue);
  const char* first = items[0].value.data();
  cache.GetItemsInto(Views(keys), &items, &statuses);
  CHECK(static_cast<const void*>(items[0].value.data()) == static_cast<const void*>(first));
  CHECK(items[0].value.capacity() >= 3 * kBigValue);
}

TEST_CASE("buffers of earlier reads never leak into later answers", "[conformance][into]") {
  Cache& cache = SharedCache();
  const std::vector<std::string> small = StoreKeys(cache, "into-grow", 4, "s");
  const std::vector<std::string> big = StoreKeys(cache, "into-grow", 4, BytePattern(kBigValue));
  std::vector<Item> items;
  std::vector<Status> statuses;
  cache.GetItemsInto(Views(small), &items, &statuses);
  for (std::size_t i = 0; i < small.size(); ++i) CHECK(items[i].value == "s" + std::to_string(i));

  // Values larger than the buffers they land in.
  cache.GetItemsInto(Views(big), &items, &statuses);
  for (std::size_t i = 0; i < big.size(); ++i) {
    REQUIRE(Ok(statuses[i]));
    CHECK(items[i].value == BytePattern(kBigValue) + std::to_string(i));
  }

  // Misses after hits: the old bytes are gone, not handed out again.
  REQUIRE(Ok(cache.Remove(big[1])));
  cache.GetItemsInto(Views(big), &items, &statuses);
  CHECK(Ok(statuses[0]));
  CHECK(statuses[1].IsNotFound());
  CHECK(items[1].value.empty());
  CHECK(items[2].value == BytePattern(kBigValue) + "2");

  // A shorter batch shrinks the answer to its own keys.
  const std::vector<std::string> one = {small[0]};
  cache.GetItemsInto(Views(one), &items, &statuses);
  REQUIRE(items.size() == 1);
  REQUIRE(statuses.size() == 1);
  CHECK(items[0].value == "s0");
}

TEST_CASE("an empty batch read is an empty answer", "[conformance][into]") {
  Cache& cache = SharedCache();
  std::vector<Item> items(3);
  std::vector<Status> statuses(3);
  cache.GetItemsInto({}, &items, &statuses);
  CHECK(items.empty());
  CHECK(statuses.empty());
}

}  // namespace
}  // namespace cachet::conformance
