// Values shared with Python's pymemcache, python-memcached and pylibmc through a
// real memcached: the Python clients write and cachet (flags_profile = python)
// reads, and cachet writes (zlib from 100 bytes) and the Python clients read.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "interop_fixture.h"

namespace cachet::test {
namespace {

constexpr std::uint32_t kPythonPickle = 1;
constexpr std::uint32_t kPythonZlib = 8;
constexpr std::uint32_t kPythonText = 16;

// What differs between the three clients.
struct PythonClientTraits {
  std::string name;         // the script's client argument
  std::string package;      // its Debian package
  std::uint32_t int_flags;  // python-memcached and pymemcache: 2 (int); pylibmc: 4 (long)
  bool compresses;          // pymemcache 3.5.2 has no compression
};

const PythonClientTraits kPymemcache{"pymemcache", "python3-pymemcache", 2, false};
const PythonClientTraits kPythonMemcached{"memcache", "python3-memcache", 2, true};
const PythonClientTraits kPylibmc{"pylibmc", "python3-pylibmc", 4, true};

const std::string kUtf8 = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93";  // "héllo wörld ✓"
const std::string kTwoTo63 = "9223372036854775808";                  // just past int64
const std::string kTwoTo70 = "1180591620717411303424";               // past uint64 too

// Repetitive, so zlib shrinks it well.
std::string LongText() {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "cachet interop line " + std::to_string(i % 7) + "\n";
  return text;
}

std::string LongUtf8() {
  std::string text;
  for (int i = 0; i < 40; ++i) text += kUtf8;
  return text;
}

bool StartsWithZlibHeader(const std::string& bytes) { return !bytes.empty() && bytes[0] == '\x78'; }

// Python ints of every size, text, compressed values and a pickled dict: cachet
// reads the numbers and text exactly and refuses the pickle, keeping it stored.
void PythonWritesCachetReads(InteropFixture& fixture, const PythonClientTraits& traits) {
  const ScriptClient python = PythonClient(traits.name, fixture.port());
  if (!ClientAvailable(python, traits.package)) return;
  const std::string p = traits.name + ":";
  const Status written = python.Write({{p + "bytes", "bytes", "hello from python"},
                                       {p + "text", "text", kUtf8},
                                       {p + "int", "int", "42"},
                                       {p + "negative", "int", "-7"},
                                       {p + "int63", "int", kTwoTo63},
                                       {p + "int70", "int", kTwoTo70},
                                       {p + "long", "bytes", LongText()},
                                       {p + "long_text", "text", LongUtf8()},
                                       {p + "dict", "dict", ""}});
  INFO(written.ToString());
  REQUIRE(written.ok());
  auto cache = fixture.OpenCache("python", "zlib");

  CHECK(RawItem(*cache, p + "bytes").flags == 0);
  CHECK(cache->Get(p + "bytes").value_or("?") == "hello from python");
  CHECK(RawItem(*cache, p + "text").flags == kPythonText);
  CHECK(cache->Get(p + "text").value_or("?") == kUtf8);

  CHECK(RawItem(*cache, p + "int").flags == traits.int_flags);
  CHECK(cache->Get<std::int64_t>(p + "int").value_or(0) == 42);
  CHECK(cache->Get<std::int64_t>(p + "negative").value_or(0) == -7);
  CHECK(cache->Get<std::uint64_t>(p + "int63").value_or(0) == 9223372036854775808u);
  // Python ints have no size limit: one past a C++ type is the reader's problem,
  // not damaged data, and its text is still there.
  const Lookup<std::int64_t> too_big = cache->Get<std::int64_t>(p + "int63");
  CHECK(too_big.status().code() == StatusCode::kInvalidArgument);
  const Lookup<std::uint64_t> far_too_big = cache->Get<std::uint64_t>(p + "int70");
  CHECK(far_too_big.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(far_too_big.status().message()), Catch::Contains("out of range"));
  CHECK(cache->Get(p + "int70").value_or("?") == kTwoTo70);

  const Item long_item = RawItem(*cache, p + "long");
  CHECK(long_item.flags == (traits.compresses ? kPythonZlib : 0));
  if (traits.compresses) CHECK(StartsWithZlibHeader(long_item.value));
  CHECK(cache->Get(p + "long").value_or("?") == LongText());
  CHECK(RawItem(*cache, p + "long_text").flags ==
        (traits.compresses ? kPythonText | kPythonZlib : kPythonText));
  CHECK(cache->Get(p + "long_text").value_or("?") == LongUtf8());

  const Lookup<std::string> pickle = cache->Get(p + "dict");
  REQUIRE(pickle.error());
  CHECK(pickle.status().IsUnsupported());
  CHECK_THAT(std::string(pickle.status().message()),
             Catch::Contains("flags 1") && Catch::Contains("pickle"));
  CHECK(RawItem(*cache, p + "dict").flags == kPythonPickle);
}

// cachet writes every typed value; the Python client reads ints as int and the
// rest as bytes.
void CachetWritesPythonReads(InteropFixture& fixture, const PythonClientTraits& traits) {
  const ScriptClient python = PythonClient(traits.name, fixture.port());
  if (!ClientAvailable(python, traits.package)) return;
  auto cache = fixture.OpenCache("python", "zlib");
  const std::string p = "cachet-" + traits.name + ":";
  REQUIRE(cache->Set(p + "plain", std::string("hello from cachet")).ok());
  REQUIRE(cache->Set(p + "int", std::int64_t{-42}).ok());
  REQUIRE(cache->Set(p + "max", std::numeric_limits<std::uint64_t>::max()).ok());
  REQUIRE(cache->Set(p + "double", 1.5).ok());
  REQUIRE(cache->Set(p + "bool", true).ok());
  REQUIRE(cache->Set(p + "utf8", kUtf8).ok());
  REQUIRE(cache->Set(p + "long", LongText()).ok());
  REQUIRE(cache->Set(p + "doc", Json{{"name", "cachet"}}).ok());
  CHECK(RawItem(*cache, p + "long").flags == kPythonZlib);

  std::vector<std::string> keys = {p + "plain", p + "int",  p + "max", p + "double",
                                   p + "bool",  p + "utf8", p + "doc", p + "absent"};
  // pymemcache 3.5.2 has no decompression: it would hand out the zlib bytes.
  if (traits.compresses) keys.push_back(p + "long");
  auto read = python.Read(keys);
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  auto check_read = [&](const std::string& key, const std::string& kind, const std::string& bytes) {
    const ClientValue& v = (*read)[p + key];
    INFO(key << " read by " << traits.name << " as " << v.kind << " '" << v.bytes << "'");
    CHECK(v.kind == kind);
    CHECK(v.bytes == bytes);
  };
  check_read("plain", "bytes", "hello from cachet");
  check_read("int", "int", "-42");
  check_read("max", "int", "18446744073709551615");
  check_read("double", "bytes", "1.5");
  check_read("bool", "int", "1");
  check_read("utf8", "bytes", kUtf8);
  check_read("doc", "bytes", R"({"name":"cachet"})");
  check_read("absent", "NoneType", "");
  if (traits.compresses) check_read("long", "bytes", LongText());
}

}  // namespace

TEST_CASE_METHOD(InteropFixture, "pymemcache writes, cachet reads with the python profile") {
  PythonWritesCachetReads(*this, kPymemcache);
}

TEST_CASE_METHOD(InteropFixture, "python-memcached writes, cachet reads with the python profile") {
  PythonWritesCachetReads(*this, kPythonMemcached);
}

TEST_CASE_METHOD(InteropFixture, "pylibmc writes, cachet reads with the python profile") {
  PythonWritesCachetReads(*this, kPylibmc);
}

TEST_CASE_METHOD(InteropFixture, "cachet writes with the python profile, pymemcache reads") {
  CachetWritesPythonReads(*this, kPymemcache);
}

TEST_CASE_METHOD(InteropFixture, "cachet writes with the python profile, python-memcached reads") {
  CachetWritesPythonReads(*this, kPythonMemcached);
}

TEST_CASE_METHOD(InteropFixture, "cachet writes with the python profile, pylibmc reads") {
  CachetWritesPythonReads(*this, kPylibmc);
}

}  // namespace cachet::test
