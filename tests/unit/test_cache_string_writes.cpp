// Cache strings through the codec: writes go through Codec::EncodeView (raw
// bytes stored without a copy, compressed ones with the flags that say so), and
// read back as written, one by one and by the batch reads into buffers, which
// decode each value in the caller's string.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/cache.h"
#include "support/fake_backend.h"

using cachet::Backend;
using cachet::Cache;
using cachet::CacheOptions;
using cachet::Capabilities;
using cachet::Codec;
using cachet::CodecOptions;
using cachet::FlagsProfile;
using cachet::Item;
using cachet::ItemView;
using cachet::OpMetrics;
using cachet::Status;
using cachet::StoreMode;
using cachet::WriteOptions;
using cachet::CacheOp;

namespace {

// Keeps what it is given, flags included, in a map.
class MapBackend : public cachet::test::FakeBackend {
 public:
  MapBackend() : FakeBackend(Options::Named("map")) {}
};

std::shared_ptr<const Codec> ZlibCodec(FlagsProfile profile) {
  CodecOptions options;
  options.compressor = "zlib";
  options.compress_threshold = 64;
  options.flags_profile = profile;
  auto codec = Codec::Create(options);
  REQUIRE(codec.ok());
  return *codec;
}

}  // namespace

TEST_CASE("a short string is stored raw with flags 0 and reads back", "[unit][cache]") {
  auto backend = std::make_shared<MapBackend>();
  Cache cache(backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{"ns:", {}, true});
  REQUIRE(cache.Set("k", std::string("short value")).ok());
  CHECK(backend->Stored("ns:k").value == "short value");
  CHECK(backend->Stored("ns:k").flags == 0);
  auto found = cache.Get<std::string>("k");
  REQUIRE(found.hit());
  CHECK(found.value() == "short value");
}

TEST_CASE("a long compressible string is stored compressed and reads back", "[unit][cache]") {
  const std::string value(4096, 'x');
  for (FlagsProfile profile : {FlagsProfile::kCachet, FlagsProfile::kPython}) {
    auto backend = std::make_shared<MapBackend>();
    Cache cache(backend, ZlibCodec(profile), CacheOptions{});
    REQUIRE(cache.Set("k", value).ok());
    const Item stored = backend->Stored("k");
    CHECK(stored.value.size() < value.size());
    CHECK(stored.flags != 0);
    // A second write on the same thread reuses the compression buffer: the
    // first value must already be safely in the store.
    REQUIRE(cache.Set("k2", std::string(2048, 'y')).ok());
    auto found = cache.Get<std::string>("k");
    REQUIRE(found.hit());
    CHECK(found.value() == value);
    auto second = cache.Get<std::string>("k2");
    REQUIRE(second.hit());
    CHECK(second.value() == std::string(2048, 'y'));
  }
}

TEST_CASE("EncodeView stores what Encode stores", "[unit][codec]") {
  auto codec = ZlibCodec(FlagsProfile::kCachet);
  for (const std::string& bytes : {std::string("tiny"), std::string(1000, 'z')}) {
    Item item;
    REQUIRE(codec->Encode(std::string_view(bytes), &item).ok());
    ItemView view;
    REQUIRE(codec->EncodeView(bytes, &view).ok());
    CHECK(view.value == item.value);
    CHECK(view.flags == item.flags);
  }
}

namespace {

// Stores under "ns:": "raw" (short, flags 0), "zipped" (kBig, compressed),
// "number" (42) and "corrupt" (flags that say zlib over bytes that are not).
const std::string kBig(4096, 'x');
void StoreReadCases(Cache& cache, MapBackend& backend) {
  REQUIRE(cache.Set("raw", std::string("short")).ok());
  REQUIRE(cache.Set("zipped", kBig).ok());
  REQUIRE(cache.Set("number", std::int64_t{42}).ok());
  REQUIRE(backend.Stored("ns:zipped").flags != 0);
  Item corrupt = backend.Stored("ns:zipped");
  corrupt.value = "not zlib at all";
  backend.Put("ns:corrupt", corrupt);
}

}  // namespace

TEST_CASE("GetMultiInto decodes each value into the caller's string", "[unit][cache]") {
  auto backend = std::make_shared<MapBackend>();
  Cache cache(backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{"ns:", {}, true});
  StoreReadCases(cache, *backend);

  const std::vector<std::string_view> keys = {"raw", "zipped", "corrupt", "", "absent", "number"};
  // Stale bytes in every buffer: none may survive into the answer.
  std::vector<std::string> values(keys.size(), std::string(100, '?'));
  std::vector<Status> statuses;
  const std::size_t get_multi = static_cast<std::size_t>(CacheOp::kGetMulti);
  const OpMetrics before = cache.metrics()[get_multi];
  for (int round = 0; round < 2; ++round) {
    cache.GetMultiInto(keys, &values, &statuses);
    REQUIRE(statuses.size() == keys.size());
    CHECK(statuses[0].ok());
    CHECK(values[0] == "short");
    CHECK(statuses[1].ok());
    CHECK(values[1] == kBig);
    CHECK(statuses[2].IsCorruption());
    CHECK(values[2].empty());
    CHECK(statuses[3].IsInvalidArgument());
    CHECK(values[3].empty());
    CHECK(statuses[4].IsNotFound());
    CHECK(values[4].empty());
    CHECK(statuses[5].ok());
    CHECK(values[5] == "42");
  }
  // Metrics count each key's outcome after decoding: the corrupt value is an error.
  const OpMetrics after = cache.metrics()[get_multi];
  CHECK(after.calls == before.calls + 2);
  CHECK(after.hits == before.hits + 6);
  CHECK(after.misses == before.misses + 2);
  CHECK(after.errors == before.errors + 4);
  CHECK(after.count(cachet::StatusCode::kCorruption) ==
        before.count(cachet::StatusCode::kCorruption) + 2);
}

TEST_CASE("GetInto reads each value into the caller's string", "[unit][cache]") {
  auto backend = std::make_shared<MapBackend>();
  Cache cache(backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{"ns:", {}, true});
  StoreReadCases(cache, *backend);

  const std::size_t get = static_cast<std::size_t>(CacheOp::kGet);
  const OpMetrics before = cache.metrics()[get];
  // Stale bytes in the buffer before every read: none may survive into the answer.
  std::string value;
  const auto read = [&](std::string_view key) {
    value.assign(100, '?');
    return cache.GetInto(key, &value);
  };
  CHECK(read("raw").ok());
  CHECK(value == "short");
  CHECK(read("zipped").ok());
  CHECK(value == kBig);
  CHECK(read("corrupt").IsCorruption());
  CHECK(value.empty());
  CHECK(read("").IsInvalidArgument());
  CHECK(value.empty());
  CHECK(read("absent").IsNotFound());
  CHECK(value.empty());
  CHECK(read("number").ok());
  CHECK(value == "42");
  // Counted as the gets they are, after decoding: the corrupt value is an error.
  const OpMetrics after = cache.metrics()[get];
  CHECK(after.calls == before.calls + 6);
  CHECK(after.hits == before.hits + 3);
  CHECK(after.misses == before.misses + 1);
  CHECK(after.errors == before.errors + 2);

  backend->FailWith(Status::Unavailable("store down"));
  CHECK(read("raw").IsUnavailable());
  CHECK(value.empty());
  backend->Recover();
}

TEST_CASE("GetInto keeps the string's storage from read to read", "[unit][cache]") {
  auto backend = std::make_shared<MapBackend>();
  Cache cache(backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{});
  REQUIRE(cache.Set("a", std::string(40, 'a')).ok());
  REQUIRE(cache.Set("b", std::string(30, 'b')).ok());
  const std::string zipped(900, 'z');
  REQUIRE(cache.Set("zipped", zipped).ok());
  REQUIRE(backend->Stored("zipped").flags != 0);
  std::string value;
  value.reserve(1000);
  const char* storage = value.data();
  for (int round = 0; round < 3; ++round) {
    REQUIRE(cache.GetInto("a", &value).ok());
    CHECK(value == std::string(40, 'a'));
    REQUIRE(cache.GetInto("b", &value).ok());
    CHECK(value == std::string(30, 'b'));
    CHECK(cache.GetInto("absent", &value).IsNotFound());
    CHECK(value.data() == storage);
    // A compressed value is decompressed on its own, then copied into the storage.
    REQUIRE(cache.GetInto("zipped", &value).ok());
    CHECK(value == zipped);
    CHECK(value.data() == storage);
  }
  CHECK(value.capacity() >= 1000);
}

TEST_CASE("GetInto reads a key that lies in the string it writes", "[unit][cache]") {
  auto backend = std::make_shared<MapBackend>();
  Cache cache(backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{"ns:", {}, true});
  const std::string long_key(40, 'k');
  REQUIRE(cache.Set("a", std::string("value of a")).ok());
  REQUIRE(cache.Set(long_key, std::string(100, 'v')).ok());
  std::string text = "a";  // the key in the string's own (short) storage
  REQUIRE(cache.GetInto(text, &text).ok());
  CHECK(text == "value of a");
  text = long_key;  // and in storage of its own
  REQUIRE(cache.GetInto(text, &text).ok());
  CHECK(text == std::string(100, 'v'));
  text = "absent";
  CHECK(cache.GetInto(text, &text).IsNotFound());
  CHECK(text.empty());
}

namespace {

// Before running its first batch, reads other keys through `inner`, on the same
// thread: as a store that reads through a Cache of its own would.
class NestingBackend : public cachet::test::FakeBackend {
 public:
  NestingBackend() : FakeBackend(Options::Named("nesting")) {}
  void Execute(std::span<cachet::Operation> batch) override {
    if (inner != nullptr && !nested) {
      nested = true;
      const std::vector<std::string_view> keys = {"x", "y", "z"};
      inner->GetMultiInto(keys, &inner_values, &inner_statuses);
    }
    FakeBackend::Execute(batch);
  }
  Cache* inner = nullptr;
  bool nested = false;
  std::vector<std::string> inner_values;
  std::vector<Status> inner_statuses;
};

}  // namespace

TEST_CASE("GetMultiInto called again from inside a store's batch leaves both calls whole",
          "[unit][cache]") {
  // The thread keeps one plan for these calls: the nested one must not take it
  // from the call that is running the store.
  auto inner_backend = std::make_shared<MapBackend>();
  Cache inner(inner_backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{});
  REQUIRE(inner.Set("x", std::string("ex")).ok());
  REQUIRE(inner.Set("z", std::string("zed")).ok());
  auto backend = std::make_shared<NestingBackend>();
  backend->inner = &inner;
  Cache cache(backend, ZlibCodec(FlagsProfile::kCachet), CacheOptions{});
  REQUIRE(cache.Set("a", std::string("apple")).ok());
  REQUIRE(cache.Set("b", std::string("banana")).ok());

  const std::vector<std::string_view> keys = {"a", "missing", "b"};
  std::vector<std::string> values;
  std::vector<Status> statuses;
  cache.GetMultiInto(keys, &values, &statuses);
  REQUIRE(backend->nested);
  REQUIRE(statuses.size() == 3);
  CHECK(statuses[0].ok());
  CHECK(values[0] == "apple");
  CHECK(statuses[1].IsNotFound());
  CHECK(values[1].empty());
  CHECK(statuses[2].ok());
  CHECK(values[2] == "banana");
  REQUIRE(backend->inner_statuses.size() == 3);
  CHECK(backend->inner_values == std::vector<std::string>{"ex", "", "zed"});
  CHECK(backend->inner_statuses[1].IsNotFound());
}
