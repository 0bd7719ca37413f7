// Conformance: expiry. memcached counts TTLs in whole seconds, so items get 1 s
// and the tests poll for at most 3 s; nothing asserts how fast anything is.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

using std::chrono::seconds;

constexpr std::chrono::milliseconds kExpiryWait{3000};

TEST_CASE("an item with a 1 s TTL expires", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("ttl");
  REQUIRE(cache.Set(key, std::string("brief"), seconds(1)).ok());
  CHECK(GoneWithin(cache, key, kExpiryWait));
}

TEST_CASE("an item with a long TTL or none is still there", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string long_lived = UniqueKey("ttl-long");
  const std::string forever = UniqueKey("ttl-none");
  REQUIRE(cache.Set(long_lived, std::string("v"), seconds(600)).ok());
  REQUIRE(cache.Set(forever, std::string("v"), Ttl{0}).ok());
  CHECK(cache.Get(long_lived).hit());
  CHECK(cache.Get(forever).hit());
}

TEST_CASE("add succeeds once the old item has expired", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("ttl-add");
  REQUIRE(cache.Set(key, std::string("old"), seconds(1)).ok());
  REQUIRE(GoneWithin(cache, key, kExpiryWait));
  REQUIRE(cache.Add(key, std::string("new")).ok());
  CHECK(cache.Get(key).value_or("") == "new");
}

TEST_CASE("touch gives an existing item a new TTL", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("touch");
  if (!Supports(Capability::kTouch)) {
    REQUIRE(cache.Set(key, std::string("v")).ok());
    CHECK(cache.Touch(key, seconds(1)).IsUnsupported());
    return;
  }
  CHECK(cache.Touch(key, seconds(1)).IsNotFound());
  REQUIRE(cache.Set(key, std::string("v"), Ttl{0}).ok());
  REQUIRE(cache.Touch(key, seconds(1)).ok());
  CHECK(GoneWithin(cache, key, kExpiryWait));
}

TEST_CASE("get-and-touch reads the value and sets a new TTL", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  Backend& backend = cache.backend();
  const std::string key = UniqueKey("gat");
  const std::string full_key = cache.options().key_namespace + key;
  Item item;
  if (!Supports(Capability::kGetAndTouch)) {
    CHECK(backend.GetAndTouch(full_key, seconds(1), &item).IsUnsupported());
    return;
  }
  CHECK(backend.GetAndTouch(full_key, seconds(1), &item).IsNotFound());
  REQUIRE(cache.Set(key, std::string("seen"), Ttl{0}).ok());
  REQUIRE(backend.GetAndTouch(full_key, seconds(1), &item).ok());
  CHECK(item.value == "seen");
  CHECK(GoneWithin(cache, key, kExpiryWait));
}

}  // namespace
}  // namespace cachet::conformance
