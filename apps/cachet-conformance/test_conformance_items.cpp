// Conformance: single-key reads and writes, and what keys a store accepts.
#include <catch2/catch.hpp>
#include <string>

#include "suite_support.h"

namespace cachet::conformance {
namespace {

TEST_CASE("set then get returns the value; an absent key is a miss", "[conformance]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("set-get");
  CHECK(cache.Get(key).miss());
  REQUIRE(Ok(cache.Set(key, std::string("hello"))));
  auto got = cache.Get(key);
  REQUIRE(got.hit());
  CHECK(got.value() == "hello");
  REQUIRE(Ok(cache.Set(key, std::string("again"))));
  CHECK(cache.Get(key).value_or("") == "again");
}

TEST_CASE("gets returns the value with a version token", "[conformance]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("gets");
  CHECK(cache.Gets(key).miss());
  REQUIRE(Ok(cache.Set(key, std::string("v"))));
  auto got = cache.Gets(key);
  REQUIRE(got.hit());
  CHECK(got.value().value == "v");
  if (Supports(Capability::kCas)) CHECK(got.value().cas != 0);
}

TEST_CASE("add stores only an absent key and keeps the present value", "[conformance]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("add");
  REQUIRE(Ok(cache.Add(key, std::string("first"))));
  CHECK(cache.Add(key, std::string("second")).IsNotStored());
  CHECK(cache.Get(key).value_or("") == "first");
}

TEST_CASE("replace stores only a present key", "[conformance]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("replace");
  // No capability covers replace; a store without it must say so plainly.
  Status first = cache.Replace(key, std::string("x"));
  if (first.IsUnsupported()) {
    CHECK_THAT(std::string(first.message()), Catch::Contains(Settings().store));
    SkipCase("the store does not offer replace");
    return;
  }
  CHECK(first.IsNotStored());
  CHECK(cache.Get(key).miss());
  REQUIRE(Ok(cache.Set(key, std::string("old"))));
  REQUIRE(Ok(cache.Replace(key, std::string("new"))));
  CHECK(cache.Get(key).value_or("") == "new");
}

TEST_CASE("remove deletes a key; removing an absent key is not_found", "[conformance]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("remove");
  REQUIRE(Ok(cache.Set(key, std::string("v"))));
  REQUIRE(Ok(cache.Remove(key)));
  CHECK(cache.Get(key).miss());
  CHECK(cache.Remove(key).IsNotFound());
}

TEST_CASE("append and prepend add bytes around the value", "[conformance]") {
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("append");
  if (!Supports(Capability::kAppendPrepend)) {
    // Without the capability a store may still do one of the two natively; what
    // it cannot do it refuses, and neither creates the missing key.
    Status append = cache.Append(key, "x");
    Status prepend = cache.Prepend(key, "x");
    CHECK((append.IsUnsupported() || append.IsNotStored()));
    CHECK((prepend.IsUnsupported() || prepend.IsNotStored()));
    CHECK(cache.Get(key).miss());
    SkipWithout(Capability::kAppendPrepend);
    return;
  }
  CHECK(cache.Append(key, "x").IsNotStored());
  CHECK(cache.Prepend(key, "x").IsNotStored());
  CHECK(cache.Get(key).miss());
  REQUIRE(Ok(cache.Set(key, std::string("mid"))));
  REQUIRE(Ok(cache.Append(key, std::string_view("-end\0\r\n", 7))));
  REQUIRE(Ok(cache.Prepend(key, "start-")));
  CHECK(cache.Get(key).value_or("") == std::string("start-mid-end\0\r\n", 16));
}

TEST_CASE("an empty key is invalid_argument", "[conformance]") {
  Cache& cache = SharedCache();
  CHECK(cache.Set("", std::string("v")).IsInvalidArgument());
  CHECK(cache.Get("").status().IsInvalidArgument());
  CHECK(cache.Remove("").IsInvalidArgument());
}

TEST_CASE("a key over the store's limit is invalid_argument", "[conformance]") {
  auto limit = Settings().max_key_size;
  if (!limit) {
    SkipCase("no --max-key-size given");
    return;
  }
  Cache& cache = SharedCache();
  const std::string key = UniqueKey("long") + std::string(*limit, 'k');
  CHECK(cache.Set(key, std::string("v")).IsInvalidArgument());
  CHECK(cache.Get(key).status().IsInvalidArgument());
}

TEST_CASE("a key with a space or CRLF never runs as a command", "[conformance]") {
  // A text protocol that sent this key raw would run "flush_all" on the server.
  Cache& cache = SharedCache();
  const std::string canary = UniqueKey("canary");
  REQUIRE(Ok(cache.Set(canary, std::string("alive"))));
  const std::string hostile = UniqueKey("hostile") + " 0 0 1\r\nflush_all\r\n";
  Status s = cache.Set(hostile, std::string("v"));
  CHECK((s.ok() || s.IsInvalidArgument()));
  if (s.ok()) CHECK(cache.Get(hostile).value_or("") == "v");
  CHECK(cache.Get(canary).value_or("") == "alive");
}

}  // namespace
}  // namespace cachet::conformance
