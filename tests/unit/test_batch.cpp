// Batch and Cache::Run over the memory store, seen through a recording wrapper:
// one Execute per run (per stretch around appends: cache_run.cpp), namespace and
// default TTL applied, typed values, refusals before the run, noreply, metrics
// per operation, and reuse without allocation.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "support/allocation_hooks.h"
#include "support/forwarding_backend.h"

using namespace cachet;  // NOLINT: a test of the whole public API

namespace {

// The backend of `cache`, through a pointer that owns the Cache and so keeps it alive.
std::shared_ptr<Backend> StoreOf(std::unique_ptr<Cache> cache) {
  Backend& store = cache->backend();
  return {std::shared_ptr<Cache>(std::move(cache)), &store};
}

// Forwards to the memory store of `inner`, keeping what each Execute was given.
class RecordingBackend : public test::ForwardingBackend {
 public:
  RecordingBackend(std::unique_ptr<Cache> inner, Capabilities caps)
      : ForwardingBackend("recording", StoreOf(std::move(inner))), caps_(caps) {}

  Capabilities capabilities() const noexcept override { return caps_; }
  Status Gets(std::string_view key, Item* out) override {
    ++single_gets;
    return inner().Gets(key, out);
  }

  void Execute(std::span<Operation> batch) override {
    ++executes;
    if (!test::CountingAllocations()) {
      seen.clear();
      for (const Operation& op : batch) seen.push_back(op);
    }
    // A noreply counter's reply is never read (memcached text): its counter is
    // left as the store found it.
    std::vector<std::uint64_t> counters_before;
    for (const Operation& op : batch) counters_before.push_back(op.counter);
    inner().Execute(batch);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].noreply) batch[i].counter = counters_before[i];
    }
    // A store that computes the CAS token only for the reads that ask (as Redis).
    if (drop_cas) {
      for (Operation& op : batch) {
        if (!op.want_cas) op.result.cas = 0;
      }
    }
  }

  int executes = 0;
  int single_gets = 0;
  bool drop_cas = false;
  std::vector<Operation> seen;  // the last batch, keys and values as sent

 private:
  Capabilities caps_;
};

// The value of an outcome, or a sentinel that no check expects when it has none.
[[maybe_unused]] std::uint64_t Got(const Result<std::uint64_t>& r) {
  return r.ok() ? r.value() : ~std::uint64_t{0};
}
template <class T>
T Got(const Lookup<T>& l) {
  return l.value_or(T{});
}

struct Fixture {
  explicit Fixture(Capabilities caps = Capabilities{Capability::kCas},
                   CacheOptions options = {"ns:", Ttl{60000}, true}) {
    auto config = Config::Parse("[cache]\nbackend = memory\n", "batch-test.conf");
    REQUIRE(config.ok());
    auto inner = Cache::Open(std::move(config).value());
    REQUIRE(inner.ok());
    auto backend = std::make_shared<RecordingBackend>(std::move(inner).value(), caps);
    recording = backend.get();
    auto codec = Codec::Create(CodecOptions{});
    REQUIRE(codec.ok());
    cache = std::make_unique<Cache>(backend, codec.value(), options);
  }
  RecordingBackend* recording;
  std::unique_ptr<Cache> cache;
};

std::uint64_t Count(const Cache& cache, CacheOp op, std::uint64_t OpMetrics::*field) {
  return cache.metrics()[static_cast<std::size_t>(op)].*field;
}

TEST_CASE("a mixed batch runs in one Execute per stretch, and every outcome reads back") {
  // The values an append or prepend joins are read first (GetOrCompute's records
  // are not joined: docs/get-or-compute.md), after what the batch wrote to their
  // keys before them: the add of "present" ends the first stretch.
  Fixture f;
  Cache& cache = *f.cache;
  REQUIRE(cache.Set("present", "old").ok());
  Batch batch(cache);
  const BatchWrite set = batch.Set("a", 1);
  const BatchCounter incr = batch.Incr("a", 5);
  const BatchRead<std::int64_t> get = batch.Get<std::int64_t>("a");
  const BatchRead<std::string> missing = batch.Get("absent");
  const BatchWrite add = batch.Add("present", "x");
  const BatchWrite replace = batch.Replace("absent", "x");
  const BatchWrite append = batch.Append("present", "-tail");
  const BatchWrite prepend = batch.Prepend("present", "head-");
  const BatchRead<std::string> joined = batch.Get("present");
  const BatchWrite removed = batch.Remove("present");
  const BatchWrite remove_again = batch.Remove("present");
  const BatchCounter decr = batch.Decr("a", 10);
  const BatchWrite touch = batch.Touch("a", Ttl{5000});
  const BatchCounter incr_absent = batch.Incr("absent");
  CHECK(batch.size() == 14);
  cache.Run(batch);

  CHECK(f.recording->executes == 3);
  CHECK(batch.Outcome(set).ok());
  CHECK(Got(batch.Outcome(incr)) == 6);
  CHECK(Got(batch.Outcome(get)) == 6);
  CHECK(batch.Outcome(missing).miss());
  CHECK(batch.Outcome(add).IsNotStored());
  CHECK(batch.Outcome(replace).IsNotStored());
  CHECK(batch.Outcome(append).ok());
  CHECK(batch.Outcome(prepend).ok());
  CHECK(Got(batch.Outcome(joined)) == "head-old-tail");
  CHECK(batch.Outcome(removed).ok());
  CHECK(batch.Outcome(remove_again).IsNotFound());
  CHECK(Got(batch.Outcome(decr)) == 0);
  CHECK(batch.Outcome(touch).ok());
  CHECK(batch.Outcome(incr_absent).status().IsNotFound());
  CHECK(batch.StatusOf(get).ok());
  CHECK(cache.Get("present").miss());
}

TEST_CASE("a batch puts the namespace in front of keys and the default TTL on writes") {
  Fixture f;
  REQUIRE(f.cache->Set("j", "v").ok());
  Batch batch(*f.cache);
  (void)batch.Set("k", "v");
  (void)batch.Set("timed", "v", Ttl{2000});
  (void)batch.Append("j", "more");  // j is not written before it: one stretch
  (void)batch.Get("k");
  f.cache->Run(batch);
  const std::vector<Operation>& seen = f.recording->seen;
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].key == "ns:k");
  CHECK(seen[0].ttl == Ttl{60000});
  CHECK(seen[1].ttl == Ttl{2000});
  CHECK(seen[2].key == "ns:j");
  CHECK(seen[2].ttl == Ttl{0});  // append keeps the item's expiry
  CHECK(seen[3].key == "ns:k");
  CHECK(f.cache->Get("j").value_or("") == "vmore");
}

TEST_CASE("typed values go through the codec both ways") {
  Fixture f;
  Batch batch(*f.cache);
  const Json doc = {{"name", "cachet"}, {"n", 3}};
  (void)batch.Set("doc", doc);
  (void)batch.Set("pi", 3.25);
  (void)batch.Set("yes", true);
  (void)batch.Set("neg", -7);
  const auto doc_back = batch.Get<Json>("doc");
  const auto pi_back = batch.Get<double>("pi");
  const auto yes_back = batch.Get<bool>("yes");
  const auto neg_back = batch.Get<std::int64_t>("neg");
  const auto doc_as_int = batch.Get<std::int64_t>("doc");
  f.cache->Run(batch);
  CHECK(Got(batch.Outcome(doc_back)) == doc);
  CHECK(Got(batch.Outcome(pi_back)) == 3.25);
  CHECK(Got(batch.Outcome(yes_back)) == true);
  CHECK(Got(batch.Outcome(neg_back)) == -7);
  CHECK(batch.Outcome(doc_as_int).error());  // a document is not an integer
  // What the batch wrote, the single calls read.
  CHECK(f.cache->Get<Json>("doc").value_or(Json()) == doc);
}

TEST_CASE("gets and cas in a batch: a conflict answers exists") {
  Fixture f;
  REQUIRE(f.cache->Set("c", "one").ok());
  const Lookup<Versioned<std::string>> before = f.cache->Gets<std::string>("c");
  REQUIRE(before.hit());
  const std::uint64_t token = before->cas;
  Batch batch(*f.cache);
  const BatchWrite first = batch.Cas("c", "two", token);
  const BatchWrite second = batch.Cas("c", "three", token);  // the token is stale now
  const BatchVersionedRead<std::string> read = batch.Gets("c");
  const BatchWrite gone = batch.Cas("never-there", "x", token);
  f.cache->Run(batch);
  CHECK(batch.Outcome(first).ok());
  CHECK(batch.Outcome(second).IsExists());
  CHECK(batch.Outcome(gone).IsNotFound());
  const Lookup<Versioned<std::string>> versioned = batch.Outcome(read);
  REQUIRE(versioned.hit());
  CHECK(versioned->value == "two");
  CHECK(versioned->cas != 0);
  CHECK(versioned->cas != token);
}

TEST_CASE("a batched gets returns the value and token of its own read, not a later write's") {
  for (const bool drop_cas : {false, true}) {
    Fixture f;
    f.recording->drop_cas = drop_cas;  // true: a store that hashes only on request
    REQUIRE(f.cache->Set("c", "one").ok());
    const Lookup<Versioned<std::string>> before = f.cache->Gets<std::string>("c");
    REQUIRE(before.hit());
    Batch batch(*f.cache);
    const auto read = batch.Gets("c");
    const auto plain = batch.Get("c");
    (void)batch.Set("c", "two");
    f.recording->single_gets = 0;
    f.cache->Run(batch);
    CHECK(f.recording->single_gets == 0);  // no read after the batch
    REQUIRE(f.recording->seen.size() == 3);
    CHECK(f.recording->seen[0].want_cas);
    CHECK_FALSE(f.recording->seen[1].want_cas);
    const Lookup<Versioned<std::string>> got = batch.Outcome(read);
    REQUIRE(got.hit());
    CHECK(got->value == "one");
    CHECK(got->cas == before->cas);
    CHECK(Got(batch.Outcome(plain)) == "one");

    batch.Clear();
    REQUIRE(f.cache->Set("d", "one").ok());
    const std::uint64_t token = f.cache->Gets<std::string>("d")->cas;
    const auto read_removed = batch.Gets("d");
    const BatchWrite removed = batch.Remove("d");
    f.cache->Run(batch);
    CHECK(batch.Outcome(removed).ok());
    const Lookup<Versioned<std::string>> gone = batch.Outcome(read_removed);
    REQUIRE(gone.hit());
    CHECK(gone->value == "one");
    CHECK(gone->cas == token);
    CHECK(f.cache->Get("d").miss());
  }
}

TEST_CASE("refusals before the run: nothing of them is sent") {
  Fixture f;
  Batch batch(*f.cache);
  const BatchWrite empty_key = batch.Set("", "v");
  const BatchWrite negative = batch.Set("k", "v", Ttl{-1});
  const BatchWrite negative_touch = batch.Touch("k", Ttl{-5});
  const BatchRead<std::string> empty_read = batch.Get("");
  const BatchWrite fine = batch.Set("k", "v");
  f.cache->Run(batch);
  REQUIRE(f.recording->seen.size() == 1);
  CHECK(batch.Outcome(empty_key).IsInvalidArgument());
  CHECK(batch.Outcome(negative).IsInvalidArgument());
  CHECK(batch.Outcome(negative_touch).IsInvalidArgument());
  CHECK(batch.Outcome(empty_read).error());
  CHECK(batch.Outcome(fine).ok());
}

TEST_CASE("outcomes before a run, an empty batch and another Cache's batch") {
  Fixture f;
  Fixture other;
  Batch batch(*f.cache);
  const BatchWrite write = batch.Set("k", "v");
  CHECK(batch.Outcome(write).IsInvalidArgument());  // not run yet

  Batch empty(*f.cache);
  f.cache->Run(empty);
  CHECK(f.recording->executes == 0);
  CHECK(empty.ran());

  other.cache->Run(batch);
  CHECK(other.recording->executes == 0);
  CHECK(batch.Outcome(write).IsInvalidArgument());
  // Refused before the store was asked: counted by the Cache that refused it.
  CHECK(Count(*other.cache, CacheOp::kSet, &OpMetrics::keys) == 1);
  CHECK(Count(*other.cache, CacheOp::kSet, &OpMetrics::errors) == 1);
  CHECK(Count(*f.cache, CacheOp::kSet, &OpMetrics::keys) == 0);
  CHECK(f.cache->Get("k").miss());
}

TEST_CASE("noreply on a store without it answers unsupported, naming the store") {
  Fixture f;  // the recording store declares no noreply
  Batch batch(*f.cache);
  const BatchWrite quiet = batch.Set("k", "v");
  batch.Noreply(quiet);
  const BatchWrite loud = batch.Set("l", "v");
  f.cache->Run(batch);
  const Status s = batch.Outcome(quiet);
  CHECK(s.IsUnsupported());
  CHECK(std::string(s.message()).find("recording") != std::string::npos);
  CHECK(batch.Outcome(loud).ok());
  CHECK(f.cache->Get("k").miss());  // never sent
  CHECK(f.cache->Get("l").hit());
}

TEST_CASE("noreply per operation and per batch on a store with it") {
  Fixture f(Capabilities{Capability::kNoreply, Capability::kCas});
  Batch batch(*f.cache);
  const BatchWrite quiet = batch.Set("k", "v");
  batch.Noreply(quiet);
  const BatchWrite loud = batch.Set("l", "v");
  f.cache->Run(batch);
  REQUIRE(f.recording->seen.size() == 2);
  CHECK(f.recording->seen[0].noreply);
  CHECK_FALSE(f.recording->seen[1].noreply);
  CHECK(batch.Outcome(quiet).ok());
  CHECK(batch.Outcome(loud).ok());

  batch.Clear();
  batch.set_noreply(true);
  (void)batch.Set("m", "v");
  const BatchCounter counter = batch.Incr("n");
  (void)batch.Get("m");
  f.cache->Run(batch);
  REQUIRE(f.recording->seen.size() == 3);
  CHECK(f.recording->seen[0].noreply);
  CHECK(f.recording->seen[1].noreply);
  CHECK_FALSE(f.recording->seen[2].noreply);  // reads always wait
  CHECK(batch.StatusOf(counter).IsNotFound());
  CHECK(batch.Outcome(counter).status().IsNotFound());
}

TEST_CASE("a counter's outcome follows the noreply it was sent with, not today's flags") {
  Fixture f(Capabilities{Capability::kNoreply, Capability::kCas});
  REQUIRE(f.cache->Set("n", 0).ok());
  Batch batch(*f.cache);
  const BatchCounter counter = batch.Incr("n");
  f.cache->Run(batch);
  CHECK(Got(batch.Outcome(counter)) == 1);

  batch.set_noreply(true);
  f.cache->Run(batch);  // the reply, 2, is not read
  REQUIRE(f.recording->seen.size() == 1);
  CHECK(f.recording->seen[0].counter == 0);  // the first run's 1 was cleared
  CHECK(batch.StatusOf(counter).ok());
  CHECK(batch.Outcome(counter).status().IsInvalidArgument());
  batch.set_noreply(false);  // flags changed, no run since
  CHECK(batch.Outcome(counter).status().IsInvalidArgument());

  f.cache->Run(batch);
  CHECK(Got(batch.Outcome(counter)) == 3);
}

TEST_CASE("refusals made by a run are decided again by the next run") {
  Fixture f;  // no noreply
  Fixture other;
  Batch batch(*f.cache);
  const BatchWrite first = batch.Set("a", "1");
  const BatchWrite second = batch.Set("b", "2");
  const auto read = batch.Get("a");
  batch.Noreply(first);
  f.cache->Run(batch);
  CHECK(batch.Outcome(first).IsUnsupported());
  CHECK(batch.Outcome(second).ok());
  CHECK(Got(batch.Outcome(read)).empty());  // a miss: the set was not sent
  CHECK(f.cache->Get("a").miss());

  // Another Cache refuses the whole run, and only that run.
  other.cache->Run(batch);
  CHECK(other.recording->executes == 0);
  CHECK(batch.Outcome(second).IsInvalidArgument());
  CHECK(batch.Outcome(read).error());

  batch.set_noreply(true);
  f.cache->Run(batch);
  CHECK(batch.Outcome(first).IsUnsupported());
  CHECK(batch.Outcome(second).IsUnsupported());
  CHECK(Got(batch.Outcome(read)).empty());

  // Batch-wide noreply off, but `first` was marked on its own: still refused.
  batch.set_noreply(false);
  f.cache->Run(batch);
  CHECK(batch.Outcome(first).IsUnsupported());
  CHECK(batch.Outcome(second).ok());

  // Cleared and refilled: nothing of the old refusals is left.
  batch.Clear();
  const BatchWrite again = batch.Set("a", "1");
  const auto read_again = batch.Get("a");
  const BatchCounter count = batch.Incr("c");
  f.cache->Run(batch);
  CHECK(batch.Outcome(again).ok());
  CHECK(Got(batch.Outcome(read_again)) == "1");
  CHECK(batch.Outcome(count).status().IsNotFound());
  CHECK(f.cache->Get("a").value_or("") == "1");
}

TEST_CASE("a write refused for noreply is sent by a rerun without it") {
  Fixture f;  // no noreply
  Batch batch(*f.cache);
  batch.set_noreply(true);
  const BatchWrite write = batch.Set("k", "v");
  const auto read = batch.Get("k");
  f.cache->Run(batch);
  CHECK(batch.Outcome(write).IsUnsupported());
  CHECK(batch.Outcome(read).miss());
  batch.set_noreply(false);
  f.cache->Run(batch);
  CHECK(batch.Outcome(write).ok());
  CHECK(Got(batch.Outcome(read)) == "v");
  CHECK(f.cache->Get("k").value_or("") == "v");

  // And the one made for another Cache runs on its own once refused elsewhere.
  Fixture other;
  Batch moved(*f.cache);
  const BatchWrite w = moved.Set("m", "1");
  other.cache->Run(moved);
  CHECK(moved.Outcome(w).IsInvalidArgument());
  f.cache->Run(moved);
  CHECK(moved.Outcome(w).ok());
  CHECK(f.cache->Get("m").value_or("") == "1");
}

TEST_CASE("a stale handle finding an operation of another kind answers invalid_argument") {
  Fixture f;
  REQUIRE(f.cache->Set("n", 5).ok());
  Batch batch(*f.cache);
  const BatchWrite old_set = batch.Set("k", "v");
  const BatchCounter old_incr = batch.Incr("n");
  const auto old_read = batch.Get("k");
  f.cache->Run(batch);
  REQUIRE(batch.Outcome(old_set).ok());
  REQUIRE(Got(batch.Outcome(old_incr)) == 6);

  batch.Clear();
  const BatchCounter incr = batch.Incr("n");        // where old_set was
  const auto read = batch.Get("k");                 // where old_incr was
  const BatchWrite removed = batch.Remove("none");  // where old_read was
  f.cache->Run(batch);
  CHECK(Got(batch.Outcome(incr)) == 7);
  CHECK(Got(batch.Outcome(read)) == "v");
  CHECK(batch.Outcome(removed).IsNotFound());
  CHECK(batch.Outcome(old_set).IsInvalidArgument());
  CHECK(batch.StatusOf(old_set).IsInvalidArgument());
  CHECK(batch.Outcome(old_incr).status().IsInvalidArgument());
  CHECK(batch.StatusOf(old_incr).IsInvalidArgument());
  CHECK(batch.Outcome(old_read).status().IsInvalidArgument());
  CHECK(batch.Outcome(BatchVersionedRead<std::string>()).status().IsInvalidArgument());
}

// The stale handle's message names the cause, so a caller mixing up fills sees why.
bool NamesOtherFill(const Status& status) {
  return status.IsInvalidArgument() && status.message().find("another fill") != std::string::npos;
}

TEST_CASE("a stale handle finding an operation of the same kind answers invalid_argument") {
  Fixture f;
  REQUIRE(f.cache->Set("k", "old").ok());
  REQUIRE(f.cache->Set("n", 5).ok());
  Batch batch(*f.cache);
  const BatchWrite old_set = batch.Set("k", "v");
  const BatchCounter old_incr = batch.Incr("n");
  const auto old_read = batch.Get("k");
  const auto old_gets = batch.Gets("k");
  f.cache->Run(batch);
  REQUIRE(batch.Outcome(old_set).ok());
  REQUIRE(Got(batch.Outcome(old_incr)) == 6);
  REQUIRE(Got(batch.Outcome(old_read)) == "v");

  // Refilled with the same kinds at the same places: the old handles must not
  // read the new outcomes, even where the new one would be an ok.
  batch.Clear();
  const BatchWrite set = batch.Set("k2", "w");
  const BatchCounter incr = batch.Incr("n");
  const auto read = batch.Get("k");
  const auto gets = batch.Gets("k");
  CHECK(NamesOtherFill(batch.Outcome(old_set)));  // before the run as after
  f.cache->Run(batch);
  CHECK(batch.Outcome(set).ok());
  CHECK(Got(batch.Outcome(incr)) == 7);
  CHECK(Got(batch.Outcome(read)) == "v");
  CHECK(batch.Outcome(gets).hit());
  CHECK(NamesOtherFill(batch.Outcome(old_set)));
  CHECK(NamesOtherFill(batch.StatusOf(old_set)));
  CHECK(NamesOtherFill(batch.Outcome(old_incr).status()));
  CHECK(NamesOtherFill(batch.StatusOf(old_incr)));
  CHECK(NamesOtherFill(batch.Outcome(old_read).status()));
  CHECK(NamesOtherFill(batch.Outcome(old_gets).status()));

  // An empty Clear() makes a new fill too; a rerun without Clear() keeps it.
  batch.Clear();
  (void)batch.Incr("n");
  f.cache->Run(batch);
  CHECK(NamesOtherFill(batch.StatusOf(incr)));
  const BatchCounter current = batch.Incr("n");
  f.cache->Run(batch);
  CHECK(Got(batch.Outcome(current)) == 10);  // the rerun sends both incr of this fill: 9, 10

  // A stale handle marks nothing noreply in the new fill.
  batch.Clear();
  const BatchCounter fresh = batch.Incr("n");
  batch.Noreply(old_incr);
  f.cache->Run(batch);
  CHECK(batch.Outcome(fresh).ok());
}

TEST_CASE("a handle of another Batch, or a default-made one, answers invalid_argument") {
  Fixture f;
  Batch first(*f.cache);
  Batch second(*f.cache);
  const BatchWrite mine = first.Set("a", "1");
  const BatchWrite theirs = second.Set("b", "2");
  f.cache->Run(first);
  f.cache->Run(second);
  CHECK(first.Outcome(mine).ok());
  CHECK(second.Outcome(theirs).ok());
  CHECK(NamesOtherFill(first.Outcome(theirs)));
  CHECK(NamesOtherFill(second.Outcome(mine)));
  CHECK(NamesOtherFill(first.Outcome(BatchWrite())));
  CHECK(NamesOtherFill(first.Outcome(BatchCounter()).status()));
}

TEST_CASE("operations on the same key keep their order") {
  Fixture f;
  Batch batch(*f.cache);
  std::vector<BatchCounter> counters;
  (void)batch.Set("n", 0);
  for (int i = 0; i < 20; ++i) counters.push_back(batch.Incr("n", 1));
  const auto last = batch.Get<std::uint64_t>("n");
  f.cache->Run(batch);
  for (std::size_t i = 0; i < counters.size(); ++i) {
    CHECK(Got(batch.Outcome(counters[i])) == i + 1);
  }
  CHECK(Got(batch.Outcome(last)) == 20);
}

TEST_CASE("each operation of a batch counts in metrics as its single call") {
  Fixture f;
  Batch batch(*f.cache);
  (void)batch.Set("a", "1");
  (void)batch.Get("a");
  (void)batch.Get("absent");
  (void)batch.Get("");
  (void)batch.Incr("a");
  f.cache->Run(batch);
  const Cache& cache = *f.cache;
  CHECK(Count(cache, CacheOp::kSet, &OpMetrics::calls) == 1);
  CHECK(Count(cache, CacheOp::kGet, &OpMetrics::calls) == 3);
  CHECK(Count(cache, CacheOp::kGet, &OpMetrics::hits) == 1);
  CHECK(Count(cache, CacheOp::kGet, &OpMetrics::misses) == 1);
  CHECK(Count(cache, CacheOp::kGet, &OpMetrics::errors) == 1);
  CHECK(Count(cache, CacheOp::kIncr, &OpMetrics::hits) == 1);
}

TEST_CASE("a value the codec refuses counts alike in a batch and in a single Set") {
  auto config = Config::Parse("[cache]\nbackend = memory\n", "batch-test.conf");
  REQUIRE(config.ok());
  auto inner = Cache::Open(std::move(config).value());
  REQUIRE(inner.ok());
  CodecOptions small;
  small.max_value_size = 4;
  auto codec = Codec::Create(small);
  REQUIRE(codec.ok());
  Cache cache(std::shared_ptr<Backend>(std::shared_ptr<Backend>(), &inner.value()->backend()),
              codec.value(), CacheOptions{"", Ttl{0}, true});
  const std::string big(10, 'x');
  CHECK(cache.Set("single", big).IsTooLarge());
  CHECK(Count(cache, CacheOp::kSet, &OpMetrics::calls) == 1);
  CHECK(Count(cache, CacheOp::kSet, &OpMetrics::errors) == 1);
  CHECK(cache.Add("single", 123456789).IsTooLarge());  // encoded into an Item
  CHECK(Count(cache, CacheOp::kAdd, &OpMetrics::calls) == 1);
  CHECK(Count(cache, CacheOp::kAdd, &OpMetrics::errors) == 1);

  Batch batch(cache);
  const BatchWrite refused = batch.Set("batched", big);
  cache.Run(batch);
  CHECK(batch.Outcome(refused).IsTooLarge());
  CHECK(Count(cache, CacheOp::kSet, &OpMetrics::calls) == 2);
  CHECK(Count(cache, CacheOp::kSet, &OpMetrics::errors) == 2);
}

TEST_CASE("a warm batch is cleared and refilled without allocating") {
  Fixture f(Capabilities{Capability::kCas}, CacheOptions{"ns:", Ttl{0}, false});
  Batch batch(*f.cache);
  const std::string value(100, 'x');
  // Fills the batch and answers the handle of its last read.
  const auto fill = [&] {
    batch.Clear();
    BatchRead<std::string> last_read;
    for (int i = 0; i < 50; ++i) {
      (void)batch.Set("key", value);
      (void)batch.Incr("counter");
      last_read = batch.Get("key");
    }
    return last_read;
  };
  REQUIRE(f.cache->Set("counter", 0).ok());
  (void)fill();
  f.cache->Run(batch);  // warms the batch's buffers
  (void)fill();
  f.cache->Run(batch);
  test::TakeAllocationCount();
  test::CountAllocations(true);
  const BatchRead<std::string> read = fill();  // a new generation per Clear, no allocation
  const std::size_t during_fill = test::TakeAllocationCount();
  test::CountAllocations(false);
  CHECK(during_fill == 0);
  f.cache->Run(batch);
  CHECK(Got(batch.Outcome(read)) == value);
}

}  // namespace

// Joined bytes would make a compressed value undecompressable and a document
// unreadable: a single append or prepend and a batch's are refused alike, and
// the value stays as it was.
TEST_CASE("append and prepend leave compressed values and documents whole", "[batch]") {
  auto config = Config::Parse(
      "[cache]\nbackend = memory\ncompressor = zstd\ncompress_threshold = 10\n", "join.conf");
  REQUIRE(config.ok());
  auto opened = Cache::Open(std::move(config).value());
  REQUIRE(opened.ok());
  Cache& cache = **opened;
  const std::string long_value(2000, 'v');
  REQUIRE(cache.Set("packed", long_value).ok());
  REQUIRE(cache.Set("doc", Json{{"a", 1}}).ok());
  REQUIRE(cache.Set("short", std::string("ab")).ok());
  for (const char* key : {"packed", "doc"}) {
    INFO(key);
    CHECK(cache.Append(key, "X").IsUnsupported());
    CHECK(cache.Prepend(key, "X").IsUnsupported());
  }
  Batch batch(cache);
  const BatchWrite append = batch.Append("packed", "X");
  const BatchWrite prepend = batch.Prepend("doc", "X");
  const BatchWrite joined = batch.Append("short", "c");
  cache.Run(batch);
  CHECK(batch.Outcome(append).IsUnsupported());
  CHECK(batch.Outcome(prepend).IsUnsupported());
  CHECK(batch.Outcome(joined).ok());
  CHECK(cache.Get<std::string>("packed").value_or("") == long_value);
  CHECK(cache.Get<Json>("doc").value_or(Json()) == Json{{"a", 1}});
  CHECK(cache.Get<std::string>("short").value_or("") == "abc");
}
