// Numbers other clients write that do not fit a C++ integer: a Python int past 64
// bits (flags 2 or 4) or a negative one read as unsigned is intact data, so reading
// it is invalid_argument naming the range, never corruption; text that is no
// number under an integer flag stays corruption.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "cachet/codec.h"

namespace cachet {
namespace {

std::shared_ptr<const Codec> MakeCodec(FlagsProfile profile) {
  CodecOptions options;
  options.flags_profile = profile;
  auto codec = Codec::Create(options);
  REQUIRE(codec.ok());
  return *codec;
}

constexpr std::uint32_t kPythonInt = 2;
constexpr std::uint32_t kPythonLong = 4;
constexpr std::uint32_t kCachetInteger = 1;
const std::string kTwoTo70 = "1180591620717411303424";

}  // namespace

TEST_CASE("a Python int past 64 bits is out of range, not corrupt", "[codec]") {
  const auto codec = MakeCodec(FlagsProfile::kPython);
  for (const std::uint32_t flags : {kPythonInt, kPythonLong}) {
    std::int64_t s = 0;
    std::uint64_t u = 0;
    const Status as_signed = codec->Decode(Item{kTwoTo70, flags}, &s);
    CHECK(as_signed.IsInvalidArgument());
    CHECK_THAT(std::string(as_signed.message()), Catch::Contains("out of range"));
    CHECK(codec->Decode(Item{kTwoTo70, flags}, &u).IsInvalidArgument());
    CHECK(codec->Decode(Item{"-" + kTwoTo70, flags}, &s).IsInvalidArgument());
    CHECK(codec->Decode(Item{"-3", flags}, &u).IsInvalidArgument());
    Json doc;
    CHECK(codec->Decode(Item{kTwoTo70, flags}, &doc).IsInvalidArgument());
    std::string text;
    REQUIRE(codec->Decode(Item{kTwoTo70, flags}, &text).ok());  // the text is intact
    CHECK(text == kTwoTo70);
  }
}

TEST_CASE("an integer flag on text that is no number is still corruption", "[codec]") {
  std::int64_t n = 0;
  Json doc;
  const auto python = MakeCodec(FlagsProfile::kPython);
  CHECK(python->Decode(Item{"12abc", kPythonInt}, &n).IsCorruption());
  CHECK(python->Decode(Item{"-", kPythonLong}, &n).IsCorruption());
  CHECK(python->Decode(Item{"x", kPythonLong}, &doc).IsCorruption());
  const auto cachet = MakeCodec(FlagsProfile::kCachet);
  CHECK(cachet->Decode(Item{"1 2", kCachetInteger}, &n).IsCorruption());
  // A cachet-written uint64 read as int64 is the reader's choice of type.
  CHECK(cachet->Decode(Item{"18446744073709551615", kCachetInteger}, &n).IsInvalidArgument());
  // memcached's padding after a decr is still a number.
  CHECK(cachet->Decode(Item{"99 ", kCachetInteger}, &n).ok());
  CHECK(n == 99);
}

}  // namespace cachet
