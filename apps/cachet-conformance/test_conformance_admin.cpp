// Conformance: flush, stats, and answers for what a store cannot do.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

TEST_CASE("flush removes every item", "[conformance][admin]") {
  Cache& cache = SharedCache();
  if (!Supports(Capability::kFlush)) {
    CHECK(cache.Flush().IsUnsupported());
    SkipWithout(Capability::kFlush);
    return;
  }
  if (!Settings().flush_allowed) {
    SkipCase("--no-flush: the store is shared");
    return;
  }
  const std::string a = UniqueKey("flush");
  const std::string b = UniqueKey("flush");
  REQUIRE(Ok(cache.Set(a, std::string("1"))));
  REQUIRE(Ok(cache.Set(b, std::int64_t{2})));
  REQUIRE(Ok(cache.Flush()));
  CHECK(cache.Get(a).miss());
  CHECK(cache.Get(b).miss());
  REQUIRE(Ok(cache.Set(a, std::string("after"))));
  CHECK(cache.Get(a).value_or("") == "after");
}

TEST_CASE("stats answers name/value pairs", "[conformance][admin]") {
  Cache& cache = SharedCache();
  auto stats = cache.Stats();
  if (!Supports(Capability::kStats)) {
    CHECK(stats.status().IsUnsupported());
    SkipWithout(Capability::kStats);
    return;
  }
  REQUIRE(Ok(stats));
  CHECK_FALSE(stats->empty());
  for (const auto& [name, value] : *stats) CHECK_FALSE(name.empty());
}

TEST_CASE("what a store lacks answers unsupported naming the store", "[conformance][admin]") {
  Cache& cache = SharedCache();
  Backend& backend = cache.backend();
  const std::string key = UniqueKey("unsupported");
  const std::string full_key = cache.options().key_namespace + key;
  REQUIRE(Ok(cache.Set(key, std::string("1"))));
  Item item;
  std::uint64_t counter = 0;
  StatsMap stats;
  if (!Supports(Capability::kCas)) {
    CHECK(backend.Store(StoreMode::kCas, full_key, ItemView("2", 0, 1), {}).IsUnsupported());
  }
  if (!Supports(Capability::kAppendPrepend)) {
    // One of the two may be native (see the append test); both never are.
    const bool append =
        backend.Store(StoreMode::kAppend, full_key, ItemView("2"), {}).IsUnsupported();
    const bool prepend =
        backend.Store(StoreMode::kPrepend, full_key, ItemView("0"), {}).IsUnsupported();
    CHECK((append || prepend));
  }
  if (!Supports(Capability::kCounters)) CHECK(backend.Incr(full_key, 1, &counter).IsUnsupported());
  if (!Supports(Capability::kTouch)) CHECK(backend.Touch(full_key, Ttl{1000}).IsUnsupported());
  if (!Supports(Capability::kGetAndTouch)) {
    CHECK(backend.GetAndTouch(full_key, Ttl{1000}, &item).IsUnsupported());
  }
  if (!Supports(Capability::kFlush)) CHECK(backend.Flush().IsUnsupported());
  if (!Supports(Capability::kStats)) CHECK(backend.Stats(&stats).IsUnsupported());

  // Every store has some command it does not know.
  std::vector<std::string> reply;
  Status s = backend.Extension("no-such-command", {}, &reply);
  CHECK((s.IsUnsupported() || s.IsInvalidArgument()));
  CHECK_FALSE(s.message().empty());
}

TEST_CASE("the store reports its name and what it can do", "[conformance][admin]") {
  Backend& backend = SharedCache().backend();
  // The name the config's backend = asked for.
  CHECK(backend.name() == Settings().store);
  // Flags and TTL are either native or emulated by the core's envelope.
  CHECK(backend.capabilities().has(Capability::kNativeFlags));
  CHECK(backend.capabilities().has(Capability::kNativeTtl));
}

}  // namespace
}  // namespace cachet::conformance
