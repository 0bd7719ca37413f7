// Suggest: the one edit distance and the "did you mean" rule that commands,
// stores, options and benchmark scenarios share.
#include <catch2/catch.hpp>
#include <string_view>
#include <vector>

#include "cachet/suggest.h"

using cachet::ClosestName;
using cachet::DidYouMean;
using cachet::EditDistance;

namespace {

const std::vector<std::string_view> kCommands = {"get", "gets", "set", "stats", "shell", "check"};

}  // namespace

TEST_CASE("edit distance counts single-byte insertions, deletions and substitutions") {
  CHECK(EditDistance("", "") == 0);
  CHECK(EditDistance("get", "get") == 0);
  CHECK(EditDistance("", "abc") == 3);
  CHECK(EditDistance("gett", "get") == 1);
  CHECK(EditDistance("memcache", "memcached") == 1);
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(EditDistance("memcahced", "memcached") == 2);  // a swap is two edits
}

TEST_CASE("the closest name is suggested only within a third of the typed length") {
  CHECK(ClosestName("gett", kCommands) == "get");  // the first of equally close ones
  CHECK(ClosestName("chek", kCommands) == "check");
  CHECK(ClosestName("xyzzy", kCommands).empty());
  CHECK(ClosestName("sx", kCommands).empty());  // "set" is 2 edits away; the limit is 1
  CHECK(ClosestName("io_timout_ms", std::vector<std::string_view>{"io_timeout_ms"}) ==
        "io_timeout_ms");
  CHECK(ClosestName("anything", {}).empty());
}

TEST_CASE("DidYouMean is ready to append, or empty") {
  CHECK(DidYouMean("memcache", std::vector<std::string_view>{"memory", "memcached", "redis"}) ==
        " (did you mean 'memcached'?)");
  CHECK(DidYouMean("zzz", kCommands).empty());
}
