// Conformance: expiry. memcached counts TTLs in whole seconds, so items get 1 s
// and the tests poll for at most 3 s; nothing asserts how fast anything is.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

using std::chrono::seconds;

constexpr std::chrono::milliseconds kExpiryWait{3000};

// Far past memcached's 2038 limit for an absolute expiry (now + 400,000,000 s),
// and the longest TTL there is: both must be stored and read back.
const Ttl kPast2038 = seconds(400000000);
const Ttl kLongest = Ttl::max();

// The bytes stored under `key` (namespace added), read past the Cache.
std::string FullKey(Cache& cache, const std::string& key) {
  return cache.options().key_namespace + key;
}

TEST_CASE("an item with a 1 s TTL expires", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("ttl");
  REQUIRE(Ok(cache.Set(key, std::string("brief"), seconds(1))));
  CHECK(GoneWithin(cache, key, kExpiryWait));
}

TEST_CASE("an item with a long TTL or none is still there", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string long_lived = UniqueKey("ttl-long");
  const std::string forever = UniqueKey("ttl-none");
  REQUIRE(Ok(cache.Set(long_lived, std::string("v"), seconds(600))));
  REQUIRE(Ok(cache.Set(forever, std::string("v"), Ttl{0})));
  CHECK(cache.Get(long_lived).hit());
  CHECK(cache.Get(forever).hit());
}

TEST_CASE("add succeeds once the old item has expired", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("ttl-add");
  REQUIRE(Ok(cache.Set(key, std::string("old"), seconds(1))));
  REQUIRE(GoneWithin(cache, key, kExpiryWait));
  REQUIRE(Ok(cache.Add(key, std::string("new"))));
  CHECK(cache.Get(key).value_or("") == "new");
}

TEST_CASE("touch gives an existing item a new TTL", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("touch");
  if (!Supports(Capability::kTouch)) {
    REQUIRE(Ok(cache.Set(key, std::string("v"))));
    CHECK(cache.Touch(key, seconds(1)).IsUnsupported());
    SkipWithout(Capability::kTouch);
    return;
  }
  CHECK(cache.Touch(key, seconds(1)).IsNotFound());
  REQUIRE(Ok(cache.Set(key, std::string("v"), Ttl{0})));
  REQUIRE(Ok(cache.Touch(key, seconds(1))));
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
    SkipWithout(Capability::kGetAndTouch);
    return;
  }
  CHECK(backend.GetAndTouch(full_key, seconds(1), &item).IsNotFound());
  REQUIRE(Ok(cache.Set(key, std::string("seen"), Ttl{0})));
  REQUIRE(Ok(backend.GetAndTouch(full_key, seconds(1), &item)));
  CHECK(item.value == "seen");
  CHECK(GoneWithin(cache, key, kExpiryWait));
}

TEST_CASE("a TTL reaching past 2038 or Ttl::max() keeps the item", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  for (const Ttl ttl : {kPast2038, kLongest}) {
    INFO("ttl " << ttl.count() << " ms");
    const std::string key = UniqueKey("ttl-far");
    REQUIRE(Ok(cache.Set(key, std::string("far"), ttl)));
    CHECK(cache.Get(key).value_or("") == "far");
    const std::string added = UniqueKey("ttl-far-add");
    REQUIRE(Ok(cache.Add(added, std::string("far"), ttl)));
    CHECK(cache.Get(added).value_or("") == "far");
    const std::vector<std::pair<std::string, std::string>> entries = {
        {UniqueKey("ttl-far-multi"), "far"}};
    for (const Status& s : cache.SetMulti(entries, ttl)) CHECK(Ok(s));
    CHECK(cache.Get(entries[0].first).value_or("") == "far");
  }
}

TEST_CASE("touch and get-and-touch with a far-off TTL keep the item", "[conformance][ttl]") {
  if (!Supports(Capability::kTouch) && !Supports(Capability::kGetAndTouch)) {
    SkipWithout(Capability::kTouch);
    return;
  }
  Cache& cache = SharedCache();
  Backend& backend = cache.backend();
  for (const Ttl ttl : {kPast2038, kLongest}) {
    INFO("ttl " << ttl.count() << " ms");
    const std::string key = UniqueKey("touch-far");
    REQUIRE(Ok(cache.Set(key, std::string("v"), seconds(600))));
    if (Supports(Capability::kTouch)) {
      REQUIRE(Ok(cache.Touch(key, ttl)));
      CHECK(cache.Get(key).hit());
    }
    if (Supports(Capability::kGetAndTouch)) {
      Item item;
      REQUIRE(Ok(backend.GetAndTouch(FullKey(cache, key), ttl, &item)));
      CHECK(item.value == "v");
      CHECK(cache.Get(key).hit());
    }
  }
}

TEST_CASE("a write with a negative TTL is invalid_argument and changes nothing",
          "[conformance][ttl]") {
  Cache& cache = SharedCache();
  Backend& backend = cache.backend();
  const Ttl negative{-1};
  const std::string key = UniqueKey("ttl-negative");
  REQUIRE(Ok(cache.Set(key, std::string("old"), Ttl{0})));

  CHECK(cache.Set(key, std::string("new"), negative).IsInvalidArgument());
  CHECK(cache.Replace(key, std::string("new"), negative).IsInvalidArgument());
  CHECK(cache.Add(key, std::string("new"), negative).IsInvalidArgument());
  if (Supports(Capability::kCas)) {
    auto versioned = cache.Gets<std::string>(key);
    REQUIRE(versioned.hit());
    CHECK(cache.Cas(key, std::string("new"), versioned.value().cas, negative).IsInvalidArgument());
  }
  const std::string absent = UniqueKey("ttl-negative-absent");
  CHECK(cache.Add(absent, std::string("new"), negative).IsInvalidArgument());
  CHECK(cache.Set(absent, std::string("new"), seconds(-5)).IsInvalidArgument());
  CHECK(cache.SetMulti(std::vector<std::pair<std::string, std::string>>{{absent, "new"}}, negative)
            .at(0)
            .IsInvalidArgument());

  // The same answer for a Backend used directly, one by one and in a batch.
  const std::string full_key = FullKey(cache, key);
  CHECK(backend.Store(StoreMode::kSet, full_key, ItemView("new"), WriteOptions{negative})
            .IsInvalidArgument());
  CHECK(backend.Store(StoreMode::kAppend, full_key, ItemView("new"), WriteOptions{negative})
            .IsInvalidArgument());
  std::vector<Operation> batch(2);
  batch[0].kind = OpKind::kStore;
  batch[0].key = full_key;
  batch[0].item = ItemView("new");
  batch[0].ttl = negative;
  batch[1].kind = OpKind::kTouch;
  batch[1].key = full_key;
  batch[1].ttl = negative;
  backend.Execute(batch);
  CHECK(batch[0].status.IsInvalidArgument());
  CHECK(batch[1].status.IsInvalidArgument());

  CHECK(cache.Get(key).value_or("") == "old");
  CHECK(cache.Get(absent).miss());
}

TEST_CASE("touch with a negative TTL is invalid_argument and keeps the TTL", "[conformance][ttl]") {
  Cache& cache = SharedCache();
  Backend& backend = cache.backend();
  const Ttl negative{-1000};
  const std::string forever = UniqueKey("touch-negative-none");
  const std::string brief = UniqueKey("touch-negative-brief");
  REQUIRE(Ok(cache.Set(forever, std::string("v"), Ttl{0})));
  REQUIRE(Ok(cache.Set(brief, std::string("v"), seconds(1))));

  CHECK(cache.Touch(forever, negative).IsInvalidArgument());
  CHECK(cache.Touch(brief, negative).IsInvalidArgument());
  Item item;
  CHECK(backend.Touch(FullKey(cache, forever), negative).IsInvalidArgument());
  CHECK(backend.GetAndTouch(FullKey(cache, forever), negative, &item).IsInvalidArgument());
  CHECK(backend.GetAndTouch(FullKey(cache, brief), negative, &item).IsInvalidArgument());

  // The item without a TTL is still there; the one with a TTL still expires.
  CHECK(cache.Get(forever).hit());
  CHECK(GoneWithin(cache, brief, kExpiryWait));
}

}  // namespace
}  // namespace cachet::conformance
