// Cache writes of strings, which go through Codec::EncodeView: raw bytes stored
// without a copy, compressed ones with the flags that say so, and both read back
// as written.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "cachet/cache.h"

using cachet::Backend;
using cachet::Cache;
using cachet::CacheOptions;
using cachet::Capabilities;
using cachet::Codec;
using cachet::CodecOptions;
using cachet::FlagsProfile;
using cachet::Item;
using cachet::ItemView;
using cachet::Status;
using cachet::StoreMode;
using cachet::WriteOptions;

namespace {

// Keeps what it is given, flags included, in a map (one thread only).
class MapBackend : public Backend {
 public:
  std::string_view name() const noexcept override { return "map"; }
  Capabilities capabilities() const noexcept override { return {}; }
  Status Get(std::string_view key, Item* out) override {
    auto it = items_.find(std::string(key));
    if (it == items_.end()) return Status::NotFound();
    *out = it->second;
    return Status::OK();
  }
  Status Store(StoreMode, std::string_view key, ItemView item, const WriteOptions&) override {
    items_[std::string(key)] = Item{std::string(item.value), item.flags, item.cas};
    return Status::OK();
  }
  Status Remove(std::string_view key) override {
    return items_.erase(std::string(key)) == 1 ? Status::OK() : Status::NotFound();
  }
  const Item& stored(const std::string& key) { return items_.at(key); }

 private:
  std::map<std::string, Item> items_;
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
  CHECK(backend->stored("ns:k").value == "short value");
  CHECK(backend->stored("ns:k").flags == 0);
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
    const Item& stored = backend->stored("k");
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
