// Conformance: compare-and-swap and counters. Counters are memcached's (unsigned
// 64-bit, wrapping) unless the store declares Redis' signed INCRBY semantics by
// answering "redis" to Extension("counters").
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

TEST_CASE("cas stores only while the token is current", "[conformance][cas]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("cas");
  if (!Supports(Capability::kCas)) {
    REQUIRE(Ok(cache.Set(key, std::string("v"))));
    CHECK(cache.Cas(key, std::string("w"), 1).IsUnsupported());
    SkipWithout(Capability::kCas);
    return;
  }
  REQUIRE(Ok(cache.Set(key, std::string("v1"))));
  auto first = cache.Gets(key);
  REQUIRE(first.hit());
  const std::uint64_t token = first.value().cas;

  REQUIRE(Ok(cache.Cas(key, std::string("v2"), token)));
  CHECK(cache.Cas(key, std::string("v3"), token).IsExists());
  CHECK(cache.Get(key).value_or("") == "v2");

  auto second = cache.Gets(key);
  REQUIRE(second.hit());
  CHECK(second.value().cas != token);
  REQUIRE(Ok(cache.Remove(key)));
  CHECK(cache.Cas(key, std::string("v4"), second.value().cas).IsNotFound());
  CHECK(cache.Get(key).miss());
}

TEST_CASE("a write by someone else makes an old token conflict", "[conformance][cas]") {
  if (!Supports(Capability::kCas)) {
    SkipWithout(Capability::kCas);
    return;
  }
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("cas-race");
  REQUIRE(Ok(cache.Set(key, std::int64_t{1})));
  auto seen = cache.Gets<std::int64_t>(key);
  REQUIRE(seen.hit());
  REQUIRE(Ok(cache.Set(key, std::int64_t{2})));
  CHECK(cache.Cas(key, std::int64_t{3}, seen.value().cas).IsExists());
  CHECK(cache.Get<std::int64_t>(key).value_or(0) == 2);
}

TEST_CASE("incr and decr count on decimal text", "[conformance][counters]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("counter");
  if (!Supports(Capability::kCounters)) {
    REQUIRE(Ok(cache.Set(key, std::string("1"))));
    CHECK(cache.Incr(key).status().IsUnsupported());
    SkipWithout(Capability::kCounters);
    return;
  }
  if (SignedCounters()) {
    auto created = cache.Incr(key, 3);  // a missing key counts from 0
    REQUIRE(Ok(created));
    CHECK(*created == 3);
    CHECK(cache.Get(key).value_or("") == "3");
  } else {
    CHECK(cache.Incr(key).status().IsNotFound());
    CHECK(cache.Decr(key).status().IsNotFound());
  }
  REQUIRE(Ok(cache.Set(key, std::string("10"))));
  auto up = cache.Incr(key, 5);
  REQUIRE(Ok(up));
  CHECK(*up == 15);
  auto down = cache.Decr(key, 3);
  REQUIRE(Ok(down));
  CHECK(*down == 12);
  CHECK(cache.Get<std::uint64_t>(key).value_or(0) == 12);
  CHECK(cache.Get(key).value_or("") == "12");
}

TEST_CASE("counters at their limits: incr wraps at 2^64 and decr stops at 0 (or signed)",
          "[conformance][counters]") {
  if (!Supports(Capability::kCounters)) {
    SkipWithout(Capability::kCounters);
    return;
  }
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("counter-limits");
  if (SignedCounters()) {
    // Signed 64-bit: an overflow is refused and changes nothing; decr goes
    // below 0, the result coming back as its two's complement.
    REQUIRE(Ok(cache.Set(key, std::string("9223372036854775807"))));
    CHECK(cache.Incr(key, 1).status().IsInvalidArgument());
    CHECK(cache.Get(key).value_or("") == "9223372036854775807");
    REQUIRE(Ok(cache.Set(key, std::string("5"))));
    auto below = cache.Decr(key, 7);
    REQUIRE(Ok(below));
    CHECK(static_cast<std::int64_t>(*below) == -2);
    CHECK(cache.Get(key).value_or("") == "-2");
    return;
  }
  REQUIRE(Ok(cache.Set(key, std::string("18446744073709551615"))));
  auto wrapped = cache.Incr(key, 1);
  REQUIRE(Ok(wrapped));
  CHECK(*wrapped == 0);
  auto plus = cache.Incr(key, 7);
  REQUIRE(Ok(plus));
  CHECK(*plus == 7);
  auto floor = cache.Decr(key, 100);
  REQUIRE(Ok(floor));
  CHECK(*floor == 0);
  CHECK(cache.Get<std::uint64_t>(key).value_or(99) == 0);
}

TEST_CASE("incr on a value that is not a number is invalid and changes nothing",
          "[conformance][counters]") {
  if (!Supports(Capability::kCounters)) {
    SkipWithout(Capability::kCounters);
    return;
  }
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("counter-text");
  REQUIRE(Ok(cache.Set(key, std::string("twelve"))));
  CHECK(cache.Incr(key).status().IsInvalidArgument());
  CHECK(cache.Decr(key).status().IsInvalidArgument());
  CHECK(cache.Get(key).value_or("") == "twelve");
}

}  // namespace
}  // namespace cachet::conformance
