// Codec: typed values through every flags profile, compression rules, decoding by
// the flags, and the values other clients write.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cachet/codec.h"

using cachet::Codec;
using cachet::CodecOptions;
using cachet::CompressorRegistry;
using cachet::FlagsProfile;
using cachet::Item;
using cachet::Json;
using cachet::Status;

namespace {

std::shared_ptr<const Codec> MakeCodec(FlagsProfile profile, const char* compressor = "none",
                                       const char* serializer = "json",
                                       std::size_t threshold = 1024, double min_savings = 0.2) {
  CodecOptions options;
  options.flags_profile = profile;
  options.compressor = compressor;
  options.serializer = serializer;
  options.compress_threshold = threshold;
  options.compress_min_savings = min_savings;
  auto codec = Codec::Create(options);
  INFO(codec.status().ToString());
  REQUIRE(codec.ok());
  return codec.value();
}

// Text that compresses to a fraction of its size.
std::string Compressible(std::size_t size) {
  std::string out;
  while (out.size() < size) out += "the quick brown fox jumps over the lazy cache. ";
  out.resize(size);
  return out;
}

std::string Incompressible(std::size_t size) {
  std::mt19937 rng(99);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xFF);
  return out;
}

std::string Compress(const char* name, std::string_view in) {
  auto compressor = CompressorRegistry::Global().Create(name);
  REQUIRE(compressor.ok());
  std::string out;
  REQUIRE((*compressor)->Compress(in, &out).ok());
  return out;
}

template <class T>
T RoundTrip(const Codec& codec, const T& value) {
  Item item;
  REQUIRE(codec.Encode(value, &item).ok());
  T back{};
  Status s = codec.Decode(item, &back);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return back;
}

Json Document() { return Json{{"user", "ann"}, {"cart", {1, 2, 3}}, {"total", 9.5}}; }

struct ProfileCase {
  FlagsProfile profile;
  const char* compressor;
};
const ProfileCase kProfiles[] = {
    {FlagsProfile::kCachet, "none"}, {FlagsProfile::kCachet, "zstd"},
    {FlagsProfile::kCachet, "zlib"}, {FlagsProfile::kCachet, "gzip"},
    {FlagsProfile::kPerl, "none"},   {FlagsProfile::kPerl, "gzip"},
    {FlagsProfile::kPython, "none"}, {FlagsProfile::kPython, "zlib"},
};

}  // namespace

TEST_CASE("flags profiles have names", "[codec]") {
  CHECK(cachet::FlagsProfileName(FlagsProfile::kCachet) == "cachet");
  CHECK(cachet::FlagsProfileName(FlagsProfile::kPerl) == "perl");
  CHECK(cachet::FlagsProfileName(FlagsProfile::kPython) == "python");
}

TEST_CASE("Create refuses unknown strategies and bad options", "[codec]") {
  CodecOptions o;
  o.serializer = "yaml";
  CHECK(Codec::Create(o).status().IsInvalidArgument());
  o = {};
  o.compressor = "lz4";
  CHECK(Codec::Create(o).status().IsInvalidArgument());
  o = {};
  o.compressor = "zlib";
  o.compression_level = 12;
  CHECK(Codec::Create(o).status().IsInvalidArgument());
  for (double bad : {-0.1, 1.0, std::nan("")}) {
    o = {};
    o.compress_min_savings = bad;
    CHECK(Codec::Create(o).status().IsInvalidArgument());
  }
  o = {};
  o.max_value_size = 0;
  CHECK(Codec::Create(o).status().IsInvalidArgument());
}

TEST_CASE("the perl and python profiles only take the compressor they can record", "[codec]") {
  CodecOptions o;
  o.flags_profile = FlagsProfile::kPerl;
  for (const char* refused : {"zlib", "zstd"}) {
    o.compressor = refused;
    Status s = Codec::Create(o).status();
    CHECK(s.IsInvalidArgument());
    CHECK(s.message().find("perl") != std::string_view::npos);
  }
  o.compressor = "gzip";
  CHECK(Codec::Create(o).ok());
  o.flags_profile = FlagsProfile::kPython;
  CHECK(Codec::Create(o).status().IsInvalidArgument());
  o.compressor = "zstd";
  CHECK(Codec::Create(o).status().IsInvalidArgument());
  o.compressor = "zlib";
  CHECK(Codec::Create(o).ok());
}

TEST_CASE("every type round-trips through every profile", "[codec]") {
  for (const ProfileCase& p : kProfiles) {
    INFO(cachet::FlagsProfileName(p.profile) << " with " << p.compressor);
    // Threshold 0 and no minimum saving: whatever compresses at all is compressed.
    const auto codec = MakeCodec(p.profile, p.compressor, "json", 0, 0.0);
    CHECK(RoundTrip<std::string>(*codec, "hello") == "hello");
    CHECK(RoundTrip<std::string>(*codec, "").empty());
    CHECK(RoundTrip<std::string>(*codec, Compressible(5000)) == Compressible(5000));
    CHECK(RoundTrip<std::string>(*codec, std::string("\0\xFF\x01", 3)) ==
          std::string("\0\xFF\x01", 3));
    CHECK(RoundTrip<std::int64_t>(*codec, -42) == -42);
    CHECK(RoundTrip(*codec, std::numeric_limits<std::int64_t>::min()) ==
          std::numeric_limits<std::int64_t>::min());
    CHECK(RoundTrip(*codec, std::numeric_limits<std::uint64_t>::max()) ==
          std::numeric_limits<std::uint64_t>::max());
    CHECK(RoundTrip(*codec, 0.1) == 0.1);
    CHECK(RoundTrip(*codec, -1.5e300) == -1.5e300);
    CHECK(RoundTrip(*codec, true));
    CHECK_FALSE(RoundTrip(*codec, false));
    CHECK(RoundTrip(*codec, Document()) == Document());
    Json big = Json::array();
    for (int i = 0; i < 500; ++i) big.push_back(Document());
    CHECK(RoundTrip(*codec, big) == big);
  }
}

TEST_CASE("documents round-trip through every serializer", "[codec]") {
  for (const char* serializer : {"json", "msgpack", "cbor"}) {
    INFO(serializer);
    const auto codec = MakeCodec(FlagsProfile::kCachet, "zstd", serializer, 0, 0.0);
    CHECK(RoundTrip(*codec, Document()) == Document());
  }
}

TEST_CASE("decimal text with flags 0 reads as its integer as Json, whatever the serializer",
          "[codec]") {
  // What an integer becomes on a store without flags (the envelope stores it raw
  // so the store's counters work), and what incr and other clients write.
  for (const char* serializer : {"json", "msgpack", "cbor"}) {
    INFO(serializer);
    const auto codec = MakeCodec(FlagsProfile::kCachet, "none", serializer);
    for (const auto& [text, number] : std::vector<std::pair<std::string, Json>>{
             {"7", 7}, {"42", 42}, {"-5", -5}, {"99 ", 99}, {"18446744073709551615", UINT64_MAX}}) {
      INFO("'" << text << "'");
      Json doc;
      REQUIRE(codec->Decode(Item{text, 0, 0}, &doc).ok());
      CHECK(doc == number);
    }
  }
}

// The cachet profile flags every document it writes: other flags-0 bytes are
// text, which a binary serializer would read as some document (msgpack reads
// "a" as 97); JSON text, from another client too, still reads as its document.
TEST_CASE("flags-0 bytes read as Json are JSON text, never a binary document",
          "[codec]") {
  const auto json = MakeCodec(FlagsProfile::kCachet, "none", "json");
  Json doc;
  REQUIRE(json->Decode(Item{R"({"a":[1,2]})", 0, 0}, &doc).ok());
  CHECK(doc == Json::parse(R"({"a":[1,2]})"));
  CHECK(json->Decode(Item{"a", 0, 0}, &doc).IsCorruption());
  for (const char* serializer : {"msgpack", "cbor"}) {
    INFO(serializer);
    const auto binary = MakeCodec(FlagsProfile::kCachet, "none", serializer);
    for (const char* text : {"a", "-", " ", "hello"}) {
      INFO("'" << text << "'");
      const Status s = binary->Decode(Item{text, 0, 0}, &doc);
      CHECK(s.IsInvalidArgument());
      CHECK(s.message().find("read them as a string") != std::string_view::npos);
    }
    // What this codec writes is flagged and reads back.
    Item item;
    REQUIRE(binary->Encode(Document(), &item).ok());
    CHECK(item.flags != 0);
    REQUIRE(binary->Decode(item, &doc).ok());
    CHECK(doc == Document());
  }
}

// The perl and python profiles write documents as flags 0, as they write
// strings (and perl integers): with a binary serializer "7" would also be
// msgpack's 55, so only json is taken.
TEST_CASE("the perl and python profiles take only the json serializer", "[codec]") {
  for (FlagsProfile profile : {FlagsProfile::kPerl, FlagsProfile::kPython}) {
    for (const char* serializer : {"msgpack", "cbor"}) {
      INFO(cachet::FlagsProfileName(profile) << " " << serializer);
      CodecOptions options;
      options.flags_profile = profile;
      options.serializer = serializer;
      const auto codec = Codec::Create(options);
      REQUIRE(codec.status().IsInvalidArgument());
      CHECK(codec.status().message().find("use serializer = json") != std::string_view::npos);
    }
    const auto json = MakeCodec(profile, "none", "json");
    Item item;
    REQUIRE(json->Encode(std::int64_t{7}, &item).ok());
    Json doc;
    REQUIRE(json->Decode(item, &doc).ok());
    CHECK(doc == 7);
  }
}

// A document that would not read back as written is refused as it is written.
TEST_CASE("documents that would not read back are refused when written", "[codec]") {
  Json deep = Json::array();
  for (int i = 0; i < 600; ++i) deep = Json::array({deep});
  Json at_limit = Json::array();
  for (int i = 1; i < 512; ++i) at_limit = Json::array({at_limit});
  for (const char* serializer : {"json", "msgpack", "cbor"}) {
    INFO(serializer);
    const auto codec = MakeCodec(FlagsProfile::kCachet, "none", serializer);
    Item item;
    const Status s = codec->Encode(deep, &item);
    CHECK(s.IsInvalidArgument());
    CHECK(s.message().find("nested deeper than 512") != std::string_view::npos);
    REQUIRE(codec->Encode(at_limit, &item).ok());
    Json back;
    REQUIRE(codec->Decode(item, &back).ok());
    CHECK(back == at_limit);
  }
  const auto json = MakeCodec(FlagsProfile::kCachet, "none", "json");
  Item item;
  for (const Json& doc : {Json::array({std::nan(""), 1}), Json{{"x", HUGE_VAL}},
                          Json::binary({1, 2, 3})}) {
    INFO(doc.dump());
    CHECK(json->Encode(doc, &item).IsInvalidArgument());
  }
  // msgpack and cbor keep both.
  for (const char* serializer : {"msgpack", "cbor"}) {
    INFO(serializer);
    const auto binary = MakeCodec(FlagsProfile::kCachet, "none", serializer);
    const Json doc = Json::array({HUGE_VAL, Json::binary({1, 2, 3})});
    REQUIRE(binary->Encode(doc, &item).ok());
    Json back;
    REQUIRE(binary->Decode(item, &back).ok());
    CHECK(back[0].get<double>() == HUGE_VAL);
    CHECK(back[1].is_binary());
  }
}

// Joined bytes would make a compressed value undecompressable and a document
// unreadable; bytes, integers and flags-0 text take them.
TEST_CASE("CheckJoin refuses compressed values and documents", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet, "zstd", "json", 10, 0.0);
  Item item;
  REQUIRE(codec->Encode(std::string(4000, 'x'), &item).ok());
  REQUIRE(item.flags != 0);
  CHECK(codec->CheckJoin(item.flags).IsUnsupported());
  REQUIRE(codec->Encode(Json{{"a", 1}}, &item).ok());
  CHECK(codec->CheckJoin(item.flags).IsUnsupported());
  REQUIRE(codec->Encode(std::int64_t{5}, &item).ok());
  CHECK(codec->CheckJoin(item.flags).ok());
  CHECK(codec->CheckJoin(0).ok());
  const auto perl = MakeCodec(FlagsProfile::kPerl);
  CHECK(perl->CheckJoin(1).IsUnsupported());  // Storable
  CHECK(perl->CheckJoin(2).IsUnsupported());  // gzip
}

TEST_CASE("the cachet profile records kind, serializer and compressor", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  Item item;
  REQUIRE(codec->Encode(std::string_view("raw"), &item).ok());
  CHECK(item.flags == 0);
  CHECK(item.value == "raw");
  REQUIRE(codec->Encode(std::int64_t{-12}, &item).ok());
  CHECK(item.flags == 1);
  CHECK(item.value == "-12");
  REQUIRE(codec->Encode(2.5, &item).ok());
  CHECK(item.flags == 2);
  CHECK(item.value == "2.5");
  REQUIRE(codec->Encode(true, &item).ok());
  CHECK(item.flags == 3);
  CHECK(item.value == "1");
  REQUIRE(codec->Encode(Json{{"a", 1}}, &item).ok());
  CHECK(item.flags == (4u | 1u << 4));
  CHECK(item.value == R"({"a":1})");
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "none", "msgpack")->Encode(Json{1}, &item).ok());
  CHECK(item.flags == (4u | 2u << 4));
  const auto zstd = MakeCodec(FlagsProfile::kCachet, "zstd");
  REQUIRE(zstd->Encode(Compressible(4000), &item).ok());
  CHECK(item.flags == 3u << 8);
  REQUIRE(zstd->Encode(Json{{"text", Compressible(4000)}}, &item).ok());
  CHECK(item.flags == (4u | 1u << 4 | 3u << 8));
}

TEST_CASE("Encode replaces value and flags but keeps the cas", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  Item item{"old value", 77, 1234};
  REQUIRE(codec->Encode(std::uint64_t{5}, &item).ok());
  CHECK(item.value == "5");
  CHECK(item.flags == 1);
  CHECK(item.cas == 1234);
}

TEST_CASE("the perl profile writes what Cache::Memcached reads", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kPerl, "gzip");
  Item item;
  REQUIRE(codec->Encode(std::int64_t{42}, &item).ok());
  CHECK(item.flags == 0);
  CHECK(item.value == "42");
  REQUIRE(codec->Encode(Json{{"a", 1}}, &item).ok());
  CHECK(item.flags == 0);
  CHECK(item.value == R"({"a":1})");
  REQUIRE(codec->Encode(true, &item).ok());
  CHECK(item.flags == 0);
  REQUIRE(codec->Encode(Compressible(4000), &item).ok());
  CHECK(item.flags == 2);
  CHECK(item.value.substr(0, 2) == "\x1F\x8B");
}

TEST_CASE("the python profile writes what pymemcache reads", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kPython, "zlib");
  Item item;
  REQUIRE(codec->Encode(std::int64_t{-42}, &item).ok());
  CHECK(item.flags == 2);
  CHECK(item.value == "-42");
  REQUIRE(codec->Encode(std::string_view("text"), &item).ok());
  CHECK(item.flags == 0);
  REQUIRE(codec->Encode(Json{{"a", 1}}, &item).ok());
  CHECK(item.flags == 0);
  REQUIRE(codec->Encode(Compressible(4000), &item).ok());
  CHECK(item.flags == 8);
  CHECK(static_cast<unsigned char>(item.value[0]) == 0x78);
}

TEST_CASE("values other Perl and Python clients write are read", "[codec]") {
  const auto perl = MakeCodec(FlagsProfile::kPerl);
  const std::string text = Compressible(3000);
  std::string out;
  REQUIRE(perl->Decode(Item{Compress("gzip", text), 2}, &out).ok());
  CHECK(out == text);
  REQUIRE(perl->Decode(Item{Compress("gzip", text), 6}, &out).ok());  // gzip + UTF-8
  CHECK(out == text);
  REQUIRE(perl->Decode(Item{"caf\xC3\xA9", 4}, &out).ok());
  CHECK(out == "caf\xC3\xA9");

  const auto python = MakeCodec(FlagsProfile::kPython);
  std::int64_t n = 0;
  REQUIRE(python->Decode(Item{"123", 2}, &n).ok());
  CHECK(n == 123);
  REQUIRE(python->Decode(Item{"123456789012", 4}, &n).ok());  // long
  CHECK(n == 123456789012);
  REQUIRE(python->Decode(Item{Compress("zlib", "77"), 2 | 8}, &n).ok());
  CHECK(n == 77);
  REQUIRE(python->Decode(Item{Compress("zlib", text), 16 | 8}, &out).ok());
  CHECK(out == text);
  Json doc;
  REQUIRE(python->Decode(Item{"5", 2}, &doc).ok());
  CHECK(doc == 5);
}

TEST_CASE("Perl Storable and Python pickle values are refused by name", "[codec]") {
  const auto perl = MakeCodec(FlagsProfile::kPerl);
  std::string out;
  Status s = perl->Decode(Item{"\x04\x0b\x03", 1}, &out);
  CHECK(s.IsUnsupported());
  CHECK(s.message() == "flags 1: a Perl Storable value cannot be read by C++");
  CHECK(perl->Decode(Item{"x", 3}, &out).IsUnsupported());  // Storable + gzip
  Json doc;
  CHECK(perl->Decode(Item{"x", 1}, &doc).IsUnsupported());

  const auto python = MakeCodec(FlagsProfile::kPython);
  s = python->Decode(Item{"\x80\x04", 1}, &out);
  CHECK(s.IsUnsupported());
  CHECK(s.message().find("pickle") != std::string_view::npos);
  CHECK(python->Decode(Item{"x", 9}, &out).IsUnsupported());  // pickle + zlib
}

TEST_CASE("flag bits a profile does not define are refused, naming the flags", "[codec]") {
  std::string out;
  Status s = MakeCodec(FlagsProfile::kPerl)->Decode(Item{"x", 8}, &out);
  CHECK(s.IsUnsupported());
  CHECK(s.message().find("flags 8") != std::string_view::npos);
  CHECK(MakeCodec(FlagsProfile::kPython)->Decode(Item{"x", 32}, &out).IsUnsupported());
  CHECK(MakeCodec(FlagsProfile::kPython)->Decode(Item{"1", 2 | 16}, &out).IsCorruption());
  const auto cachet = MakeCodec(FlagsProfile::kCachet);
  CHECK(cachet->Decode(Item{"x", 0x1000}, &out).IsUnsupported());
  CHECK(cachet->Decode(Item{"x", 9}, &out).IsUnsupported());    // kind 9
  CHECK(cachet->Decode(Item{"x", 0x10}, &out).IsCorruption());  // serializer on bytes
  CHECK(cachet->Decode(Item{"x", 4}, &out).IsCorruption());     // document, no serializer
  Json doc;
  CHECK(cachet->Decode(Item{"x", 4 | 9 << 4}, &doc).IsUnsupported());  // serializer 9 unknown
  CHECK(cachet->Decode(Item{"x", 9 << 8}, &out).IsUnsupported());      // compressor 9 unknown
}

TEST_CASE("decoding follows the flags, never the configuration", "[codec]") {
  const std::string text = Compressible(5000);
  Item item;
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "zstd")->Encode(text, &item).ok());
  REQUIRE(item.flags == 3u << 8);
  std::string out;
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "none")->Decode(item, &out).ok());
  CHECK(out == text);
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "gzip")->Decode(item, &out).ok());
  CHECK(out == text);

  REQUIRE(MakeCodec(FlagsProfile::kCachet, "none", "msgpack")->Encode(Document(), &item).ok());
  Json doc;
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "none", "cbor")->Decode(item, &doc).ok());
  CHECK(doc == Document());

  REQUIRE(MakeCodec(FlagsProfile::kPerl, "gzip")->Encode(text, &item).ok());
  REQUIRE(MakeCodec(FlagsProfile::kPerl, "none")->Decode(item, &out).ok());
  CHECK(out == text);
  REQUIRE(MakeCodec(FlagsProfile::kPython, "zlib")->Encode(text, &item).ok());
  REQUIRE(MakeCodec(FlagsProfile::kPython, "none")->Decode(item, &out).ok());
  CHECK(out == text);
}

TEST_CASE("compression starts at the threshold", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet, "zlib", "json", 100, 0.2);
  Item item;
  REQUIRE(codec->Encode(Compressible(99), &item).ok());
  CHECK(item.flags == 0);
  CHECK(item.value == Compressible(99));
  REQUIRE(codec->Encode(Compressible(100), &item).ok());
  CHECK(item.flags == 1u << 8);
  CHECK(item.value.size() < 100);
}

TEST_CASE("decoding a moved item takes its bytes, or decompresses them", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet, "zlib", "json", 100, 0.2);
  Item plain;
  REQUIRE(codec->Encode(Compressible(50), &plain).ok());
  std::string out = "previous contents";
  REQUIRE(codec->Decode(std::move(plain), &out).ok());
  CHECK(out == Compressible(50));

  Item packed;
  REQUIRE(codec->Encode(Compressible(5000), &packed).ok());
  REQUIRE(packed.flags == 1u << 8);
  REQUIRE(codec->Decode(std::move(packed), &out).ok());
  CHECK(out == Compressible(5000));

  Item corrupt{"not zlib at all", 1u << 8, 0};
  out = "kept";
  CHECK(codec->Decode(std::move(corrupt), &out).code() == cachet::StatusCode::kCorruption);
  CHECK(out == "kept");
}

TEST_CASE("compression is kept only when it saves enough", "[codec]") {
  Item item;
  // Random bytes do not compress: stored as they are.
  const std::string noise = Incompressible(5000);
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "zstd", "json", 0, 0.0)->Encode(noise, &item).ok());
  CHECK(item.flags == 0);
  CHECK(item.value == noise);
  // Repetitive text saves well over half but not 99.9%.
  const std::string text = Compressible(2000);
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "zlib", "json", 0, 0.5)->Encode(text, &item).ok());
  CHECK(item.flags == 1u << 8);
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "zlib", "json", 0, 0.999)->Encode(text, &item).ok());
  CHECK(item.flags == 0);
  CHECK(item.value == text);
}

TEST_CASE("corrupt compressed or serialized values are corruption", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  std::string out;
  Status s = codec->Decode(Item{"not zstd at all", 3u << 8}, &out);
  CHECK(s.IsCorruption());
  CHECK(s.message().find("flags 768") != std::string_view::npos);
  Json doc;
  CHECK(codec->Decode(Item{"{\"a\":", 4 | 1 << 4}, &doc).IsCorruption());
  CHECK(codec->Decode(Item{"\xC1", 4 | 2 << 4}, &doc).IsCorruption());
  std::string truncated = Compress("zlib", Compressible(3000));
  truncated.resize(truncated.size() / 2);
  CHECK(codec->Decode(Item{truncated, 1u << 8}, &out).IsCorruption());
  CHECK(MakeCodec(FlagsProfile::kPerl)->Decode(Item{"garbage", 2}, &out).IsCorruption());
}

TEST_CASE("decompression is bounded by max_value_size", "[codec]") {
  CodecOptions o;
  o.max_value_size = 1000;
  auto small = Codec::Create(o);
  REQUIRE(small.ok());
  Item item;
  REQUIRE(MakeCodec(FlagsProfile::kCachet, "zstd")->Encode(Compressible(1 << 20), &item).ok());
  std::string out;
  Status s = (*small)->Decode(item, &out);
  CHECK(s.IsTooLarge());
  CHECK(s.message().find("max_value_size") != std::string_view::npos);
}

TEST_CASE("a value over max_value_size is not encoded", "[codec]") {
  for (const char* compressor : {"none", "zlib", "zstd"}) {
    INFO(compressor);
    CodecOptions o;
    o.compressor = compressor;
    o.max_value_size = 4096;
    auto codec = Codec::Create(o);
    REQUIRE(codec.ok());
    Item item;
    REQUIRE((*codec)->Encode(Compressible(4096), &item).ok());
    std::string back;
    REQUIRE((*codec)->Decode(item, &back).ok());  // what is written can be read
    CHECK(back == Compressible(4096));

    Status s = (*codec)->Encode(Compressible(4097), &item);
    CHECK(s.IsTooLarge());
    CHECK(s.message().find("max_value_size") != std::string_view::npos);
    cachet::ItemView view;
    CHECK((*codec)->EncodeView(Compressible(4097), &view).IsTooLarge());
    CHECK((*codec)->Encode(Json{{"text", Compressible(4097)}}, &item).IsTooLarge());
  }
}

TEST_CASE("raw decimal text reads as an integer", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  std::int64_t s = 0;
  std::uint64_t u = 0;
  REQUIRE(codec->Decode(Item{"12345", 0}, &s).ok());
  CHECK(s == 12345);
  REQUIRE(codec->Decode(Item{"99  ", 0}, &u).ok());  // memcached pads a shrunk counter
  CHECK(u == 99);
  REQUIRE(codec->Decode(Item{"18446744073709551615", 0}, &u).ok());
  CHECK(u == std::numeric_limits<std::uint64_t>::max());
  REQUIRE(codec->Decode(Item{"-5", 0}, &s).ok());
  CHECK(s == -5);
  double d = 0;
  REQUIRE(codec->Decode(Item{"7", 0}, &d).ok());
  CHECK(d == 7.0);
  bool b = false;
  REQUIRE(codec->Decode(Item{"1", 1}, &b).ok());
  CHECK(b);
}

TEST_CASE("integer range errors and non-numbers are invalid arguments", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  std::int64_t s = 0;
  std::uint64_t u = 0;
  CHECK(codec->Decode(Item{"-5", 0}, &u).IsInvalidArgument());
  CHECK(codec->Decode(Item{"18446744073709551616", 0}, &u).IsInvalidArgument());
  CHECK(codec->Decode(Item{"9223372036854775808", 0}, &s).IsInvalidArgument());
  CHECK(codec->Decode(Item{"12abc", 0}, &s).IsInvalidArgument());
  CHECK(codec->Decode(Item{"", 0}, &s).IsInvalidArgument());
  CHECK(codec->Decode(Item{"abc", 1}, &s).IsCorruption());  // stored as an integer
}

// Found by an application's try: Get<int> did not compile, though Set<int> wrote.
TEST_CASE("every integer type reads back, and a number that does not fit is refused",
          "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  int i = 0;
  unsigned u = 0;
  std::int8_t small = 0;
  std::uint16_t word = 0;
  long long wide = 0;
  Item item;
  REQUIRE(codec->Encode(std::int64_t{-42}, &item).ok());
  REQUIRE(codec->Decode(item, &i).ok());
  CHECK(i == -42);
  REQUIRE(codec->Decode(item, &wide).ok());
  CHECK(wide == -42);
  CHECK(codec->Decode(item, &u).IsInvalidArgument());  // negative, read unsigned
  REQUIRE(codec->Decode(Item{"4294967295", 0}, &u).ok());
  CHECK(u == 4294967295u);
  REQUIRE(codec->Decode(Item{"65535", 0}, &word).ok());
  CHECK(word == 65535);
  CHECK(codec->Decode(Item{"65536", 0}, &word).IsInvalidArgument());
  REQUIRE(codec->Decode(Item{"-128", 0}, &small).ok());
  CHECK(small == -128);
  const cachet::Status over = codec->Decode(Item{"128", 0}, &small);
  CHECK(over.IsInvalidArgument());
  CHECK(over.message().find("does not fit") != std::string_view::npos);
  CHECK(codec->Decode(Item{"abc", 1}, &i).IsCorruption());  // as the 64-bit read says
}

TEST_CASE("a stored kind that cannot become the asked type is an invalid argument", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kCachet);
  Item item;
  REQUIRE(codec->Encode(Document(), &item).ok());
  std::int64_t n = 0;
  double d = 0;
  bool b = false;
  CHECK(codec->Decode(item, &n).IsInvalidArgument());
  CHECK(codec->Decode(item, &d).IsInvalidArgument());
  CHECK(codec->Decode(item, &b).IsInvalidArgument());
  std::string text;
  REQUIRE(codec->Decode(item, &text).ok());  // a document's bytes are its encoding
  CHECK(text == Document().dump());
  Json doc;
  REQUIRE(codec->Decode(Item{"42", 1}, &doc).ok());  // a counter reads as a document
  CHECK(doc == 42);
  REQUIRE(codec->Decode(Item{"[1,2]", 0}, &doc).ok());  // raw text: configured serializer
  CHECK(doc == Json{1, 2});
}

TEST_CASE("a document the serializer cannot write is an invalid argument", "[codec]") {
  Item item;
  const Json bad = {{"k", std::string("\xFF", 1)}};
  CHECK(MakeCodec(FlagsProfile::kCachet)->Encode(bad, &item).IsInvalidArgument());
}

TEST_CASE("one codec serves many threads at once", "[codec]") {
  for (const char* compressor : {"zstd", "zlib", "gzip"}) {
    INFO(compressor);
    const auto codec = MakeCodec(FlagsProfile::kCachet, compressor, "msgpack", 64, 0.0);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&codec, &failures, t] {
        // Catch2 assertions are not thread-safe: count failures, check after join.
        for (int i = 0; i < 200; ++i) {
          const std::string text = Compressible(100 + 37 * i + t);
          const Json doc = {{"thread", t}, {"i", i}, {"text", text}};
          Item a, b;
          std::string text_back;
          Json doc_back;
          const bool ok = codec->Encode(text, &a).ok() && codec->Encode(doc, &b).ok() &&
                          codec->Decode(a, &text_back).ok() && codec->Decode(b, &doc_back).ok();
          if (!ok || text_back != text || doc_back != doc) ++failures;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures == 0);
  }
}
