// A set refused as too large removes what the key held (memcached's server does
// the same): the value the set was to replace must not be read afterwards as if
// it were current. Whoever refuses it (the codec's max_value_size, or the store's
// own limit, which a store may answer without dropping anything itself), through
// Set, SetMulti and a Batch; other writes refused as too large keep the value.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "support/fake_backend.h"

using cachet::Batch;
using cachet::Cache;
using cachet::CacheOp;
using cachet::CacheOptions;
using cachet::Codec;
using cachet::CodecOptions;
using cachet::ItemView;
using cachet::Status;
using cachet::StoreMode;
using cachet::WriteOptions;

namespace {

constexpr std::size_t kStoreLimit = 100;  // the store's own limit
constexpr std::size_t kCodecLimit = 200;  // max_value_size, above the store's

// Refuses values over kStoreLimit bytes as too large and, like a client that
// checks the size before sending, leaves the stored item as it was.
class LimitedBackend : public cachet::test::FakeBackend {
 public:
  LimitedBackend() : FakeBackend(Options::Named("limited")) {}
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override {
    if (item.value.size() > kStoreLimit) return Status::TooLarge("limited: over 100 bytes");
    return FakeBackend::Store(mode, key, item, options);
  }
};

struct Fixture {
  std::shared_ptr<LimitedBackend> store = std::make_shared<LimitedBackend>();
  std::unique_ptr<Cache> cache;

  explicit Fixture(std::string key_namespace = "") {
    CodecOptions codec_options;
    codec_options.max_value_size = kCodecLimit;
    auto codec = Codec::Create(codec_options);
    REQUIRE(codec.ok());
    CacheOptions options;
    options.key_namespace = std::move(key_namespace);
    cache = std::make_unique<Cache>(store, *codec, options);
  }
};

const std::string kOverStore(150, 's');  // the store refuses it
const std::string kOverCodec(250, 'c');  // the codec refuses it

}  // namespace

TEST_CASE("a set refused as too large removes the key's old value", "[cache][too_large]") {
  Fixture f("ns:");
  REQUIRE(f.cache->Set("a", std::string("old")).ok());
  REQUIRE(f.cache->Set("b", std::string("old")).ok());
  CHECK(f.cache->Set("a", kOverStore).IsTooLarge());
  CHECK(f.cache->Set("b", kOverCodec).IsTooLarge());
  CHECK(f.cache->Get("a").miss());
  CHECK(f.cache->Get("b").miss());
  CHECK_FALSE(f.store->Has("ns:a"));
  CHECK_FALSE(f.store->Has("ns:b"));
  // Counted once each, as the set's error; the removal is not a call of its own.
  const auto metrics = f.cache->metrics();
  CHECK(metrics[static_cast<std::size_t>(CacheOp::kSet)].errors == 2);
  CHECK(metrics[static_cast<std::size_t>(CacheOp::kRemove)].calls == 0);
  // A typed value the codec refuses as too large, and a missing key: still too_large.
  REQUIRE(f.cache->Set("c", std::string("old")).ok());
  CHECK(f.cache->Set("c", cachet::Json(std::string(300, 'j'))).IsTooLarge());
  CHECK(f.cache->Get("c").miss());
  CHECK(f.cache->Set("never", kOverStore).IsTooLarge());
}

TEST_CASE("other writes refused as too large keep the old value", "[cache][too_large]") {
  Fixture f;
  REQUIRE(f.cache->Set("k", std::string("old")).ok());
  CHECK(f.cache->Add("k", kOverStore).IsTooLarge());
  CHECK(f.cache->Replace("k", kOverStore).IsTooLarge());
  CHECK(f.cache->Replace("k", kOverCodec).IsTooLarge());
  CHECK(f.cache->Append("k", kOverStore).IsTooLarge());
  CHECK(f.cache->Get("k").value_or("") == "old");
}

TEST_CASE("SetMulti removes the old values of the keys it could not set", "[cache][too_large]") {
  Fixture f;
  for (const char* key : {"a", "b", "c", "d"}) REQUIRE(f.cache->Set(key, std::string("old")).ok());
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"a", kOverStore}, {"b", "new"}, {"c", kOverCodec},
      // d: set, then refused; e: refused, then set. The last write decides.
      {"d", "new"}, {"d", kOverStore}, {"e", kOverCodec}, {"e", "new"}};
  const std::vector<Status> statuses = f.cache->SetMulti(entries);
  REQUIRE(statuses.size() == entries.size());
  CHECK(statuses[0].IsTooLarge());
  CHECK(statuses[1].ok());
  CHECK(statuses[2].IsTooLarge());
  CHECK(statuses[4].IsTooLarge());
  CHECK(statuses[5].IsTooLarge());
  CHECK(f.cache->Get("a").miss());
  CHECK(f.cache->Get("b").value_or("") == "new");
  CHECK(f.cache->Get("c").miss());
  CHECK(f.cache->Get("d").miss());
  CHECK(f.cache->Get("e").value_or("") == "new");
}

TEST_CASE("a batch's set refused as too large removes the old value after the batch",
          "[cache][too_large][batch]") {
  Fixture f("ns:");
  for (const char* key : {"a", "b", "c", "d", "e", "kept"}) {
    REQUIRE(f.cache->Set(key, std::string("old")).ok());
  }
  Batch batch(*f.cache);
  const auto by_store = batch.Set("a", kOverStore);
  const auto by_codec = batch.Set("b", kOverCodec);
  // c is refused, then written again: that write stands.
  const auto refused_c = batch.Set("c", kOverStore);
  batch.Set("c", std::string("new"));
  // d is written, then refused: removed.
  batch.Set("d", std::string("new"));
  const auto refused_d = batch.Set("d", kOverCodec);
  // e is refused, then written by writes that do not replace it: removed.
  batch.Set("e", kOverStore);
  const auto add = batch.Add("e", std::string("new"));
  batch.Touch("e", cachet::Ttl{60000});
  // Not a set: the value stays.
  const auto append = batch.Append("kept", kOverStore);
  f.cache->Run(batch);
  CHECK(batch.Outcome(by_store).IsTooLarge());
  CHECK(batch.Outcome(by_codec).IsTooLarge());
  CHECK(batch.Outcome(refused_c).IsTooLarge());
  CHECK(batch.Outcome(refused_d).IsTooLarge());
  CHECK(batch.Outcome(add).IsNotStored());
  CHECK(batch.Outcome(append).IsTooLarge());
  CHECK(f.cache->Get("a").miss());
  CHECK(f.cache->Get("b").miss());
  CHECK(f.cache->Get("c").value_or("") == "new");
  CHECK(f.cache->Get("d").miss());
  CHECK(f.cache->Get("e").miss());
  CHECK(f.cache->Get("kept").value_or("") == "old");
  CHECK_FALSE(f.store->Has("ns:a"));
  // The batch's outcomes stay those of its own operations.
  const auto metrics = f.cache->metrics();
  CHECK(metrics[static_cast<std::size_t>(CacheOp::kSet)].errors == 5);
  CHECK(metrics[static_cast<std::size_t>(CacheOp::kRemove)].calls == 0);
}

TEST_CASE("a batch's later operations on a key whose set was refused as added find it absent",
          "[cache][too_large][batch]") {
  // As the single calls: Set refused (its key removed), then Incr, Append, Add.
  for (const bool noreply : {false, true}) {
    INFO("set_noreply " << noreply);  // the fake store has no noreply: the removals still go
    Fixture f;
    REQUIRE(f.cache->Set("ctr", std::string("5")).ok());
    REQUIRE(f.cache->Set("log", std::string("line1;")).ok());
    REQUIRE(f.cache->Set("slot", std::string("old")).ok());
    Batch batch(*f.cache);
    batch.set_noreply(noreply);
    const auto refused_ctr = batch.Set("ctr", kOverCodec);
    const auto incr = batch.Incr("ctr");
    batch.Set("log", kOverCodec);
    const auto append = batch.Append("log", std::string("line2;"));
    batch.Set("slot", kOverCodec);
    const auto add = batch.Add("slot", std::string("new"));
    f.cache->Run(batch);
    CHECK(batch.Outcome(refused_ctr).IsTooLarge());
    if (!noreply) {
      CHECK(batch.Outcome(incr).status().IsNotFound());
      CHECK(batch.Outcome(append).IsNotStored());
      CHECK(batch.Outcome(add).ok());
      CHECK(f.cache->Get("slot").value_or("") == "new");
    } else {
      CHECK(batch.Outcome(add).IsUnsupported());  // noreply writes are not sent here
      CHECK(f.cache->Get("slot").miss());
    }
    CHECK(f.cache->Get("ctr").miss());
    CHECK(f.cache->Get("log").miss());
    // The removals sent in the sets' places are not calls of their own.
    const auto metrics = f.cache->metrics();
    CHECK(metrics[static_cast<std::size_t>(CacheOp::kRemove)].calls == 0);
  }
}

TEST_CASE("a batch with no set refused sends no removal", "[cache][too_large][batch]") {
  Fixture f;
  REQUIRE(f.cache->Set("k", std::string("old")).ok());
  f.store->ResetCounts();
  Batch batch(*f.cache);
  batch.Set("k", std::string("new"));
  batch.Add("k", kOverStore);
  f.cache->Run(batch);
  CHECK(f.store->execute_calls() == 1);
  CHECK(f.cache->Get("k").value_or("") == "new");
}
