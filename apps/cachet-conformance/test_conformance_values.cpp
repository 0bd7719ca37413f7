// Conformance: values of every typed kind, binary bytes, empty and large values.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cachet/batch.h"
#include "suite_support.h"

namespace cachet::conformance {
namespace {

template <class T>
void CheckRoundTrip(const T& value) {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("typed");
  REQUIRE(Ok(cache.Set(key, value)));
  auto got = cache.Get<T>(key);
  INFO(got.status().ToString());
  REQUIRE(got.hit());
  CHECK(got.value() == value);
}

TEST_CASE("typed values read back as written", "[conformance][values]") {
  CheckRoundTrip(std::string("text"));
  CheckRoundTrip(std::int64_t{-42});
  CheckRoundTrip(std::numeric_limits<std::int64_t>::min());
  CheckRoundTrip(std::numeric_limits<std::int64_t>::max());
  CheckRoundTrip(std::numeric_limits<std::uint64_t>::max());
  CheckRoundTrip(3.25);
  CheckRoundTrip(-0.1);
  CheckRoundTrip(true);
  CheckRoundTrip(false);
  CheckRoundTrip(Json{{"user", "ann"}, {"items", {1, 2, 3}}, {"vip", true}});
}

TEST_CASE("binary values with NUL and CR and LF read back unchanged", "[conformance][values]") {
  CheckRoundTrip(std::string("a\0b\r\nEND\r\n\0", 11));
  CheckRoundTrip(std::string("\r\n"));
  CheckRoundTrip(BytePattern(4096));
}

TEST_CASE("an empty value is a hit (not a miss)", "[conformance][values]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("empty");
  REQUIRE(Ok(cache.Set(key, std::string())));
  auto got = cache.Get(key);
  REQUIRE(got.hit());
  CHECK(got.value().empty());
}

TEST_CASE("a 1000000-byte value reads back byte for byte", "[conformance][values]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("large");
  const std::string value = BytePattern(1000000);
  REQUIRE(Ok(cache.Set(key, value)));
  auto got = cache.Get(key);
  REQUIRE(got.hit());
  CHECK(got.value().size() == value.size());
  CHECK(got.value() == value);
}

TEST_CASE("a value over the store's limit is too_large", "[conformance][values]") {
  auto limit = Settings().max_value_size;
  if (!limit) {
    SkipCase("no --max-value-size given");
    return;
  }
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("too-large");
  CHECK(cache.Set(key, BytePattern(*limit * 2)).IsTooLarge());
  CHECK(cache.Get(key).miss());
}

TEST_CASE("a set refused as too large removes the key's old value", "[conformance][values]") {
  auto limit = Settings().max_value_size;
  if (!limit) {
    SkipCase("no --max-value-size given");
    return;
  }
  // The value it was to replace must not be read afterwards as if it were current.
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("too-large-set");
  REQUIRE(Ok(cache.Set(key, std::string("old"))));
  CHECK(cache.Set(key, BytePattern(*limit * 2)).IsTooLarge());
  CHECK(cache.Get(key).miss());
  // In a batch, and in SetMulti, too.
  REQUIRE(Ok(cache.Set(key, std::string("old"))));
  Batch batch(cache);
  const auto refused = batch.Set(key, BytePattern(*limit * 2));
  cache.Run(batch);
  CHECK(batch.Outcome(refused).IsTooLarge());
  CHECK(cache.Get(key).miss());
  REQUIRE(Ok(cache.Set(key, std::string("old"))));
  const auto statuses = cache.SetMulti(std::vector<std::pair<std::string, std::string>>{
      {key, BytePattern(*limit * 2)}});
  REQUIRE(statuses.size() == 1);
  CHECK(statuses[0].IsTooLarge());
  CHECK(cache.Get(key).miss());
}

TEST_CASE("reading a document as an integer is an error (not a miss)", "[conformance][values]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("kind");
  REQUIRE(Ok(cache.Set(key, Json{{"a", 1}})));
  auto got = cache.Get<std::int64_t>(key);
  CHECK(got.error());
  CHECK(cache.Get<Json>(key).hit());
}

}  // namespace
}  // namespace cachet::conformance
