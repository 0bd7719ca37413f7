// Conformance: Cache::Run of a Batch of mixed operations answers, operation by
// operation, what the single calls answer: hits, misses, errors, CAS conflicts,
// typed values, namespaces, repeated keys in order, empty batches and noreply.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cachet/batch.h"
#include "suite_support.h"

namespace cachet::conformance {
namespace {

// The value of an outcome, or a sentinel that no check expects when it has none.
[[maybe_unused]] std::uint64_t Got(const Result<std::uint64_t>& r) {
  return r.ok() ? r.value() : ~std::uint64_t{0};
}
template <class T>
T Got(const Lookup<T>& l) {
  return l.value_or(T{});
}

// A second Cache on the suite's store (not owning it) with its own namespace.
std::unique_ptr<Cache> CacheWithNamespace(const std::string& key_namespace) {
  Cache& shared = SharedCache();
  std::shared_ptr<Backend> backend(std::shared_ptr<Backend>(), &shared.backend());
  auto codec = Codec::Create(shared.codec().options());
  REQUIRE(Ok(codec));
  CacheOptions options = shared.options();
  options.key_namespace += key_namespace;
  return std::make_unique<Cache>(backend, codec.value(), options);
}

TEST_CASE("a mixed batch answers hits and misses and errors per operation",
          "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string present = UniqueKey("batch-present");
  const std::string absent = UniqueKey("batch-absent");
  const std::string fresh = UniqueKey("batch-fresh");
  REQUIRE(Ok(cache.Set(present, std::string("here"))));

  Batch batch(cache);
  const auto hit = batch.Get(present);
  const auto miss = batch.Get(absent);
  const auto empty_key = batch.Get("");
  const auto added = batch.Add(fresh, std::string("new"));
  const auto not_added = batch.Add(present, std::string("again"));
  const auto replaced = batch.Replace(present, std::string("there"));
  const auto not_replaced = batch.Replace(absent, std::string("x"));
  const auto removed = batch.Remove(fresh);
  const auto not_removed = batch.Remove(absent);
  const auto read_back = batch.Get(present);
  cache.Run(batch);

  CHECK(batch.Outcome(hit).value_or("") == "here");
  CHECK(batch.Outcome(miss).miss());
  CHECK(batch.Outcome(empty_key).error());
  CHECK(Ok(batch.Outcome(added)));
  CHECK(batch.Outcome(not_added).IsNotStored());
  CHECK(Ok(batch.Outcome(removed)));
  CHECK(batch.Outcome(not_removed).IsNotFound());
  // No capability covers replace; a store without it says so, naming itself.
  if (batch.Outcome(replaced).IsUnsupported()) {
    CHECK_THAT(std::string(batch.Outcome(replaced).message()), Catch::Contains(Settings().store));
    CHECK(batch.Outcome(not_replaced).IsUnsupported());
    CHECK(batch.Outcome(read_back).value_or("") == "here");
    return;
  }
  CHECK(Ok(batch.Outcome(replaced)));
  CHECK(batch.Outcome(not_replaced).IsNotStored());
  CHECK(batch.Outcome(read_back).value_or("") == "there");
  CHECK(cache.Get(fresh).miss());
}

TEST_CASE("a batch of a hundred mixed operations with each result read", "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string prefix = UniqueKey("batch-hundred");
  Batch batch(cache);
  std::vector<BatchWrite> sets;
  std::vector<BatchRead<std::string>> gets;
  std::vector<BatchWrite> removes;
  for (int i = 0; i < 34; ++i) {
    const std::string key = prefix + ":" + std::to_string(i);
    sets.push_back(batch.Set(key, "value-" + std::to_string(i)));
    gets.push_back(batch.Get(key));
    if (i % 2 == 0) removes.push_back(batch.Remove(key));
  }
  REQUIRE(batch.size() == 34 * 2 + 17);
  cache.Run(batch);
  for (int i = 0; i < 34; ++i) {
    INFO("operation " << i);
    CHECK(Ok(batch.Outcome(sets[i])));
    CHECK(batch.Outcome(gets[i]).value_or("") == "value-" + std::to_string(i));
  }
  for (const BatchWrite& removed : removes) CHECK(Ok(batch.Outcome(removed)));
  CHECK(cache.Get(prefix + ":0").miss());
  CHECK(cache.Get(prefix + ":1").value_or("") == "value-1");
}

TEST_CASE("typed values in a batch go through the codec", "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string number = UniqueKey("batch-int");
  const std::string real = UniqueKey("batch-double");
  const std::string doc_key = UniqueKey("batch-doc");
  const Json doc = {{"id", 42}, {"tags", {"a", "b"}}};
  Batch batch(cache);
  (void)batch.Set(number, std::int64_t{-12});
  (void)batch.Set(real, 2.5);
  (void)batch.Set(doc_key, doc);
  const auto number_back = batch.Get<std::int64_t>(number);
  const auto real_back = batch.Get<double>(real);
  const auto doc_back = batch.Get<Json>(doc_key);
  cache.Run(batch);
  CHECK(batch.Outcome(number_back).value_or(0) == -12);
  CHECK(batch.Outcome(real_back).value_or(0) == 2.5);
  CHECK(batch.Outcome(doc_back).value_or(Json()) == doc);
  // The single calls read what the batch wrote.
  CHECK(cache.Get<Json>(doc_key).value_or(Json()) == doc);
}

TEST_CASE("the namespace applies to every key of a batch", "[conformance][batch]") {
  Cache& cache = SharedCache();
  std::unique_ptr<Cache> spaced = CacheWithNamespace("batch-ns:");
  const std::string key = UniqueKey("batch-spaced");
  Batch batch(*spaced);
  (void)batch.Set(key, std::string("inside"));
  const auto read = batch.Get(key);
  spaced->Run(batch);
  CHECK(batch.Outcome(read).value_or("") == "inside");
  CHECK(cache.Get("batch-ns:" + key).value_or("") == "inside");
  CHECK(cache.Get(key).miss());
}

TEST_CASE("operations on the same key run in the order they were added", "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("batch-order");
  Batch batch(cache);
  const auto first = batch.Set(key, std::string("a"));
  const auto read_a = batch.Get(key);
  (void)batch.Set(key, std::string("b"));
  const auto read_b = batch.Get(key);
  const auto removed = batch.Remove(key);
  const auto read_gone = batch.Get(key);
  (void)batch.Set(key, std::string("c"));
  cache.Run(batch);
  CHECK(Ok(batch.Outcome(first)));
  CHECK(batch.Outcome(read_a).value_or("") == "a");
  CHECK(batch.Outcome(read_b).value_or("") == "b");
  CHECK(Ok(batch.Outcome(removed)));
  CHECK(batch.Outcome(read_gone).miss());
  CHECK(cache.Get(key).value_or("") == "c");
}

TEST_CASE("counters in a batch repeated on one key", "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("batch-counter");
  const std::string text = UniqueKey("batch-counter-text");
  if (!Supports(Capability::kCounters)) {
    Batch batch(cache);
    const auto refused = batch.Incr(key);
    cache.Run(batch);
    CHECK(batch.Outcome(refused).status().IsUnsupported());
    SkipWithout(Capability::kCounters);
    return;
  }
  Batch batch(cache);
  (void)batch.Set(key, std::string("10"));
  (void)batch.Set(text, std::string("twelve"));
  const auto up = batch.Incr(key, 5);
  const auto down = batch.Decr(key, 3);
  const auto again = batch.Incr(key);
  const auto not_a_number = batch.Incr(text);
  const auto read = batch.Get<std::uint64_t>(key);
  cache.Run(batch);
  CHECK(Got(batch.Outcome(up)) == 15);
  CHECK(Got(batch.Outcome(down)) == 12);
  CHECK(Got(batch.Outcome(again)) == 13);
  CHECK(batch.Outcome(not_a_number).status().IsInvalidArgument());
  CHECK(batch.Outcome(read).value_or(0) == 13);

  batch.Clear();
  const auto missing = batch.Incr(UniqueKey("batch-counter-absent"), 2);
  cache.Run(batch);
  if (SignedCounters()) {
    CHECK(Got(batch.Outcome(missing)) == 2);  // a missing key counts from 0
  } else {
    CHECK(batch.Outcome(missing).status().IsNotFound());
  }
}

TEST_CASE("gets and cas in a batch: a stale token conflicts", "[conformance][batch][cas]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("batch-cas");
  REQUIRE(Ok(cache.Set(key, std::string("v1"))));
  if (!Supports(Capability::kCas)) {
    Batch batch(cache);
    const auto refused = batch.Cas(key, std::string("w"), 1);
    cache.Run(batch);
    CHECK(batch.Outcome(refused).IsUnsupported());
    SkipWithout(Capability::kCas);
    return;
  }
  Batch batch(cache);
  const auto seen = batch.Gets(key);
  cache.Run(batch);
  REQUIRE(batch.Outcome(seen).hit());
  const std::uint64_t token = batch.Outcome(seen)->cas;
  CHECK(token != 0);

  batch.Clear();
  const auto first = batch.Cas(key, std::string("v2"), token);
  const auto stale = batch.Cas(key, std::string("v3"), token);
  const auto gone = batch.Cas(UniqueKey("batch-cas-absent"), std::string("x"), token);
  const auto after = batch.Gets(key);
  cache.Run(batch);
  CHECK(Ok(batch.Outcome(first)));
  CHECK(batch.Outcome(stale).IsExists());
  CHECK(batch.Outcome(gone).IsNotFound());
  REQUIRE(batch.Outcome(after).hit());
  CHECK(batch.Outcome(after)->value == "v2");
  CHECK(batch.Outcome(after)->cas != token);
}

TEST_CASE("a gets in a batch answers its own read (not the batch's later write)",
          "[conformance][batch][cas]") {
  Cache& cache = SharedCache();
  const std::string overwritten = UniqueKey("batch-gets-set");
  const std::string removed_key = UniqueKey("batch-gets-remove");
  REQUIRE(Ok(cache.Set(overwritten, std::string("one"))));
  REQUIRE(Ok(cache.Set(removed_key, std::string("one"))));
  // Tokens as the single Gets gives them (0 on a store without CAS).
  const Lookup<Versioned<std::string>> before_set = cache.Gets<std::string>(overwritten);
  const Lookup<Versioned<std::string>> before_remove = cache.Gets<std::string>(removed_key);
  REQUIRE(before_set.hit());
  REQUIRE(before_remove.hit());

  Batch batch(cache);
  const auto read_set = batch.Gets(overwritten);
  const auto set = batch.Set(overwritten, std::string("two"));
  const auto read_removed = batch.Gets(removed_key);
  const auto removed = batch.Remove(removed_key);
  cache.Run(batch);
  CHECK(Ok(batch.Outcome(set)));
  CHECK(Ok(batch.Outcome(removed)));
  const Lookup<Versioned<std::string>> got = batch.Outcome(read_set);
  REQUIRE(got.hit());
  CHECK(got->value == "one");
  CHECK(got->cas == before_set->cas);
  const Lookup<Versioned<std::string>> gone = batch.Outcome(read_removed);
  REQUIRE(gone.hit());
  CHECK(gone->value == "one");
  CHECK(gone->cas == before_remove->cas);
  CHECK(cache.Get(overwritten).value_or("") == "two");
  CHECK(cache.Get(removed_key).miss());
}

TEST_CASE("append and prepend and touch in a batch", "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("batch-append");
  REQUIRE(Ok(cache.Set(key, std::string("mid"))));
  Batch batch(cache);
  const auto appended = batch.Append(key, "-end");
  const auto prepended = batch.Prepend(key, "start-");
  const auto touched = batch.Touch(key, Ttl{0});
  const auto touch_absent = batch.Touch(UniqueKey("batch-touch-absent"), Ttl{60000});
  const auto read = batch.Get(key);
  cache.Run(batch);
  if (Supports(Capability::kAppendPrepend)) {
    CHECK(Ok(batch.Outcome(appended)));
    CHECK(Ok(batch.Outcome(prepended)));
    CHECK(batch.Outcome(read).value_or("") == "start-mid-end");
  } else {
    CHECK(batch.Outcome(appended).IsUnsupported());
    CHECK(batch.Outcome(read).value_or("") == "mid");
  }
  if (Supports(Capability::kTouch)) {
    CHECK(Ok(batch.Outcome(touched)));
    CHECK(batch.Outcome(touch_absent).IsNotFound());
  } else {
    CHECK(batch.Outcome(touched).IsUnsupported());
  }
}

TEST_CASE("an empty batch runs and a cleared batch is reused", "[conformance][batch]") {
  Cache& cache = SharedCache();
  Batch batch(cache);
  cache.Run(batch);
  CHECK(batch.ran());
  CHECK(batch.empty());
  const std::string key = UniqueKey("batch-reuse");
  for (int round = 0; round < 3; ++round) {
    batch.Clear();
    const auto stored = batch.Set(key, std::int64_t{round});
    const auto read = batch.Get<std::int64_t>(key);
    cache.Run(batch);
    CHECK(Ok(batch.Outcome(stored)));
    CHECK(batch.Outcome(read).value_or(-1) == round);
  }
}

TEST_CASE("each batch operation counts in metrics as its single call", "[conformance][batch]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("batch-metrics");
  const auto get = static_cast<std::size_t>(CacheOp::kGet);
  const auto set = static_cast<std::size_t>(CacheOp::kSet);
  const Metrics before = cache.metrics();
  Batch batch(cache);
  (void)batch.Set(key, std::string("v"));
  (void)batch.Get(key);
  (void)batch.Get(UniqueKey("batch-metrics-absent"));
  cache.Run(batch);
  const Metrics after = cache.metrics();
  CHECK(after[set].calls == before[set].calls + 1);
  CHECK(after[get].calls == before[get].calls + 2);
  CHECK(after[get].hits == before[get].hits + 1);
  CHECK(after[get].misses == before[get].misses + 1);
}

TEST_CASE("noreply writes: sent without waiting or unsupported naming the store",
          "[conformance][batch][noreply]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("batch-noreply");
  const std::string counter = UniqueKey("batch-noreply-counter");
  REQUIRE(Ok(cache.Set(counter, std::string("1"))));
  Batch batch(cache);
  const auto quiet = batch.Set(key, std::string("quiet"));
  batch.Noreply(quiet);
  const auto bump = batch.Incr(counter, 4);
  batch.Noreply(bump);
  const auto loud = batch.Get(key);
  cache.Run(batch);
  if (!Supports(Capability::kNoreply)) {
    const Status s = batch.Outcome(quiet);
    CHECK(s.IsUnsupported());
    CHECK(std::string(s.message()).find(Settings().store) != std::string::npos);
    CHECK(batch.StatusOf(bump).IsUnsupported());
    CHECK(batch.Outcome(loud).miss());  // the refused write was never sent
    SkipWithout(Capability::kNoreply);
    return;
  }
  CHECK(Ok(batch.Outcome(quiet)));
  CHECK(batch.Outcome(loud).value_or("") == "quiet");
  if (Supports(Capability::kCounters)) {
    CHECK(Ok(batch.StatusOf(bump)));
    CHECK(batch.Outcome(bump).status().IsInvalidArgument());  // its value is not read
    CHECK(cache.Get<std::uint64_t>(counter).value_or(0) == 5);
  }

  // A whole batch noreply: every write, then a read in a second batch sees them.
  batch.Clear();
  batch.set_noreply(true);
  for (int i = 0; i < 10; ++i) (void)batch.Set(key + ":" + std::to_string(i), i);
  cache.Run(batch);
  batch.set_noreply(false);
  batch.Clear();
  std::vector<BatchRead<std::int64_t>> reads;
  for (int i = 0; i < 10; ++i)
    reads.push_back(batch.Get<std::int64_t>(key + ":" + std::to_string(i)));
  cache.Run(batch);
  for (int i = 0; i < 10; ++i) CHECK(batch.Outcome(reads[i]).value_or(-1) == i);
}

}  // namespace
}  // namespace cachet::conformance
