// Values shared with Perl's Cache::Memcached and Cache::Memcached::Fast through a
// real memcached: the Perl clients write and cachet (flags_profile = perl) reads,
// and cachet writes (gzip from 100 bytes) and the Perl clients read.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "interop_fixture.h"

namespace cachet::test {
namespace {

constexpr std::uint32_t kPerlStorable = 1;
constexpr std::uint32_t kPerlGzip = 2;
constexpr std::uint32_t kPerlUtf8 = 4;

const std::string kPlain = "hello from perl";
// Repetitive, so gzip keeps it (it saves far more than the clients' 20%).
std::string LongText() {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "cachet interop line " + std::to_string(i % 7) + "\n";
  return text;
}
const std::string kUtf8 = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93";  // "héllo wörld ✓"

std::string LongUtf8() {
  std::string text;
  for (int i = 0; i < 40; ++i) text += kUtf8;
  return text;
}

std::string PerlPackage(const std::string& client_name) {
  return client_name == "cm" ? "libcache-memcached-perl" : "libcache-memcached-fast-perl";
}

bool StartsWithGzipMagic(const std::string& bytes) {
  return bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b';
}

// The Perl client writes scalars, a compressed string, UTF-8 text and a hash ref;
// cachet reads each exactly and refuses the Storable value, keeping it stored.
void PerlWritesCachetReads(InteropFixture& fixture, const std::string& client_name,
                           bool utf8_flag) {
  const ScriptClient perl = PerlClient(client_name, fixture.port());
  if (!ClientAvailable(perl, PerlPackage(client_name))) return;
  const std::string p = client_name + ":";
  // Cache::Memcached has no UTF-8 mode (it gzips the internal representation of a
  // character string): its users store encoded bytes, as here.
  const std::string text_kind = utf8_flag ? "text" : "bytes";
  const Status written = perl.Write({{p + "plain", "bytes", kPlain},
                                     {p + "int", "int", "12345"},
                                     {p + "negative", "int", "-7"},
                                     {p + "long", "bytes", LongText()},
                                     {p + "utf8", text_kind, kUtf8},
                                     {p + "long_utf8", text_kind, LongUtf8()},
                                     {p + "hash", "hash", ""}});
  INFO(written.ToString());
  REQUIRE(written.ok());
  auto cache = fixture.OpenCache("perl", "gzip");

  CHECK(RawItem(*cache, p + "plain").flags == 0);
  CHECK(cache->Get(p + "plain").value_or("?") == kPlain);
  CHECK(cache->Get<std::int64_t>(p + "int").value_or(0) == 12345);
  CHECK(cache->Get<std::int64_t>(p + "negative").value_or(0) == -7);

  const Item long_item = RawItem(*cache, p + "long");
  CHECK(long_item.flags == kPerlGzip);
  CHECK(StartsWithGzipMagic(long_item.value));
  CHECK(cache->Get(p + "long").value_or("?") == LongText());

  CHECK(RawItem(*cache, p + "utf8").flags == (utf8_flag ? kPerlUtf8 : 0));
  CHECK(cache->Get(p + "utf8").value_or("?") == kUtf8);
  CHECK(RawItem(*cache, p + "long_utf8").flags == (utf8_flag ? kPerlUtf8 | kPerlGzip : kPerlGzip));
  CHECK(cache->Get(p + "long_utf8").value_or("?") == LongUtf8());

  const Lookup<std::string> storable = cache->Get(p + "hash");
  REQUIRE(storable.error());
  CHECK(storable.status().IsUnsupported());
  CHECK_THAT(std::string(storable.status().message()),
             Catch::Contains("flags 1") && Catch::Contains("Storable"));
  // Refused, not lost: the value is still there for the Perl side.
  CHECK(RawItem(*cache, p + "hash").flags == kPerlStorable);
}

// cachet writes every typed value; the Perl client reads the same bytes back.
void CachetWritesPerlReads(InteropFixture& fixture, const std::string& client_name) {
  const ScriptClient perl = PerlClient(client_name, fixture.port());
  if (!ClientAvailable(perl, PerlPackage(client_name))) return;
  auto cache = fixture.OpenCache("perl", "gzip");
  const std::string p = "cachet-" + client_name + ":";
  REQUIRE(cache->Set(p + "plain", std::string("hello from cachet")).ok());
  REQUIRE(cache->Set(p + "int", std::int64_t{-42}).ok());
  REQUIRE(cache->Set(p + "max", std::numeric_limits<std::uint64_t>::max()).ok());
  REQUIRE(cache->Set(p + "double", 1.5).ok());
  REQUIRE(cache->Set(p + "bool", true).ok());
  REQUIRE(cache->Set(p + "utf8", kUtf8).ok());
  REQUIRE(cache->Set(p + "long", LongText()).ok());
  REQUIRE(cache->Set(p + "doc", Json{{"name", "cachet"}}).ok());
  CHECK(RawItem(*cache, p + "long").flags == kPerlGzip);

  auto read = perl.Read({p + "plain", p + "int", p + "max", p + "double", p + "bool", p + "utf8",
                         p + "long", p + "doc", p + "absent"});
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  auto bytes_of = [&](const std::string& key) {
    const ClientValue& v = (*read)[p + key];
    INFO(key << " read by " << client_name << " as " << v.kind);
    CHECK(v.kind == "bytes");
    return v.bytes;
  };
  CHECK(bytes_of("plain") == "hello from cachet");
  CHECK(bytes_of("int") == "-42");
  CHECK(bytes_of("max") == "18446744073709551615");
  CHECK(bytes_of("double") == "1.5");
  CHECK(bytes_of("bool") == "1");
  CHECK(bytes_of("utf8") == kUtf8);  // flags 0: ::Fast hands out the bytes undecoded
  CHECK(bytes_of("long") == LongText());
  CHECK(bytes_of("doc") == R"({"name":"cachet"})");
  CHECK((*read)[p + "absent"].kind == "undef");
}

}  // namespace

TEST_CASE_METHOD(InteropFixture, "Cache::Memcached writes, cachet reads with the perl profile") {
  PerlWritesCachetReads(*this, "cm", false);
}

TEST_CASE_METHOD(InteropFixture,
                 "Cache::Memcached::Fast writes, cachet reads with the perl profile") {
  PerlWritesCachetReads(*this, "cmf", true);
}

TEST_CASE_METHOD(InteropFixture, "cachet writes with the perl profile, Cache::Memcached reads") {
  CachetWritesPerlReads(*this, "cm");
}

TEST_CASE_METHOD(InteropFixture,
                 "cachet writes with the perl profile, Cache::Memcached::Fast reads") {
  CachetWritesPerlReads(*this, "cmf");
}

}  // namespace cachet::test
