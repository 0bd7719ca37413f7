// Tokyo Tyrant request encoder: every command, byte by byte, and the limits.
#include <array>
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "tt_bytes.h"
#include "tt_request.h"

namespace tt = cachet::tokyotyrant;
using cachet::test::Hex;
using tt::Command;

namespace {

// A value of `size` bytes without writing them all: a view over a static
// buffer is not possible for 256 MiB, so the tests build one string once.
const std::string& HugeField() {
  static const std::string huge(static_cast<std::size_t>(tt::kMaxFieldSize) + 1, 'x');
  return huge;
}

}  // namespace

TEST_CASE("put, putkeep, putcat and putnr encode ksiz vsiz key value", "[tokyotyrant]") {
  const std::array<std::pair<Command, const char*>, 4> cases = {{
      {Command::kPut, "c8 10"},
      {Command::kPutKeep, "c8 11"},
      {Command::kPutCat, "c8 12"},
      {Command::kPutNr, "c8 18"},
  }};
  for (const auto& [command, head] : cases) {
    std::string out;
    REQUIRE(tt::EncodeStore(command, "key", "value", &out).ok());
    CHECK(out == Hex(head) + Hex("00000003 00000005") + "keyvalue");
  }
}

TEST_CASE("a store of an empty value sends a zero size", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeStore(Command::kPut, "k", "", &out).ok());
  CHECK(out == Hex("c8 10 00000001 00000000") + "k");
}

TEST_CASE("store refuses a command that is not a store", "[tokyotyrant]") {
  std::string out = "prefix";
  CHECK(tt::EncodeStore(Command::kGet, "k", "v", &out).IsInvalidArgument());
  CHECK(out == "prefix");
}

TEST_CASE("putshl puts the width before the key", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodePutShl("log", "abc", 10, &out).ok());
  CHECK(out == Hex("c8 13 00000003 00000003 0000000a") + "logabc");
  std::string refused;
  CHECK(tt::EncodePutShl("log", "abc", -1, &refused).IsInvalidArgument());
  CHECK(refused.empty());
}

TEST_CASE("out, get and vsiz encode ksiz key", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeKeyCommand(Command::kOut, "ab", &out).ok());
  REQUIRE(tt::EncodeKeyCommand(Command::kGet, "ab", &out).ok());
  REQUIRE(tt::EncodeKeyCommand(Command::kVsiz, "ab", &out).ok());
  CHECK(out ==
        Hex("c8 20 00000002") + "ab" + Hex("c8 30 00000002") + "ab" + Hex("c8 38 00000002") + "ab");
  CHECK(tt::EncodeKeyCommand(Command::kPut, "ab", &out).IsInvalidArgument());
}

TEST_CASE("mget encodes the count then each key, duplicates kept", "[tokyotyrant]") {
  const std::vector<std::string_view> keys = {"a", "bb", "a"};
  std::string out;
  REQUIRE(tt::EncodeMget(keys, &out).ok());
  CHECK(out ==
        Hex("c8 31 00000003 00000001") + "a" + Hex("00000002") + "bb" + Hex("00000001") + "a");
}

TEST_CASE("mget of no keys is a zero count", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeMget({}, &out).ok());
  CHECK(out == Hex("c8 31 00000000"));
}

TEST_CASE("mget refuses more than 1048576 keys", "[tokyotyrant]") {
  const std::vector<std::string_view> keys(static_cast<std::size_t>(tt::kMaxItems) + 1, "k");
  std::string out;
  CHECK(tt::EncodeMget(keys, &out).IsTooLarge());
  CHECK(out.empty());
  const std::vector<std::string_view> at_limit(static_cast<std::size_t>(tt::kMaxItems), "k");
  CHECK(tt::EncodeMget(at_limit, &out).ok());
}

TEST_CASE("fwmkeys puts max before the prefix, negative max is allowed", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeFwmKeys("user:", -1, &out).ok());
  CHECK(out == Hex("c8 58 00000005 ffffffff") + "user:");
  out.clear();
  REQUIRE(tt::EncodeFwmKeys("", 10, &out).ok());
  CHECK(out == Hex("c8 58 00000000 0000000a"));
}

TEST_CASE("addint puts the number before the key, two's complement", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeAddInt("n", 5, &out).ok());
  REQUIRE(tt::EncodeAddInt("n", -2, &out).ok());
  CHECK(out == Hex("c8 60 00000001 00000005") + "n" + Hex("c8 60 00000001 fffffffe") + "n");
}

TEST_CASE("adddouble sends integer part and fraction x 10^12, both signed", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeAddDouble("d", 1.5, &out).ok());
  CHECK(out == Hex("c8 61 00000001 0000000000000001 000000746a528800") + "d");
  out.clear();
  REQUIRE(tt::EncodeAddDouble("d", -1.5, &out).ok());
  CHECK(out == Hex("c8 61 00000001 ffffffffffffffff ffffff8b95ad7800") + "d");
}

TEST_CASE("adddouble refuses what the wire cannot carry", "[tokyotyrant]") {
  std::string out;
  CHECK(
      tt::EncodeAddDouble("d", std::numeric_limits<double>::quiet_NaN(), &out).IsInvalidArgument());
  CHECK(
      tt::EncodeAddDouble("d", std::numeric_limits<double>::infinity(), &out).IsInvalidArgument());
  CHECK(tt::EncodeAddDouble("d", 1e19, &out).IsInvalidArgument());
  CHECK(out.empty());
}

TEST_CASE("SplitDouble and JoinDouble round-trip", "[tokyotyrant]") {
  for (double v : {0.0, 1.5, -1.5, 0.25, -0.000001, 123456.789, -98765.4321}) {
    std::int64_t integer = 0;
    std::int64_t fraction = 0;
    tt::SplitDouble(v, &integer, &fraction);
    CHECK(tt::JoinDouble(integer, fraction) == Approx(v).margin(1e-11));
    CHECK((integer >= 0 && fraction >= 0 || integer <= 0 && fraction <= 0));
  }
}

TEST_CASE("commands without arguments are two bytes", "[tokyotyrant]") {
  const std::array<std::pair<Command, const char*>, 7> cases = {{
      {Command::kIterInit, "c8 50"},
      {Command::kIterNext, "c8 51"},
      {Command::kSync, "c8 70"},
      {Command::kVanish, "c8 72"},
      {Command::kRnum, "c8 80"},
      {Command::kSize, "c8 81"},
      {Command::kStat, "c8 88"},
  }};
  for (const auto& [command, bytes] : cases) {
    std::string out;
    REQUIRE(tt::EncodeBare(command, &out).ok());
    CHECK(out == Hex(bytes));
  }
  std::string out;
  CHECK(tt::EncodeBare(Command::kGet, &out).IsInvalidArgument());
}

TEST_CASE("optimize sends its parameter string", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeOptimize("#bnum=1000", &out).ok());
  CHECK(out == Hex("c8 71 0000000a") + "#bnum=1000");
}

TEST_CASE("copy sends the path and refuses shell commands", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeCopy("/tmp/backup.tch", &out).ok());
  CHECK(out == Hex("c8 73 0000000f") + "/tmp/backup.tch");
  std::string refused;
  CHECK(tt::EncodeCopy("@rm -rf /", &refused).IsInvalidArgument());
  CHECK(refused.empty());
}

TEST_CASE("restore sends path size, timestamp, options, path", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeRestore("ulog", 0x0102030405060708ull, 1, &out).ok());
  CHECK(out == Hex("c8 74 00000004 0102030405060708 00000001") + "ulog");
}

TEST_CASE("setmst sends host size, port, timestamp, options, host", "[tokyotyrant]") {
  std::string out;
  REQUIRE(tt::EncodeSetMaster("127.0.0.1", 1978, 7, 0, &out).ok());
  CHECK(out == Hex("c8 78 00000009 000007ba 0000000000000007 00000000") + "127.0.0.1");
}

TEST_CASE("misc sends name size, options, count, name, then each argument", "[tokyotyrant]") {
  const std::vector<std::string_view> args = {"k1", "v1", "k2", ""};
  std::string out;
  REQUIRE(tt::EncodeMisc("putlist", tt::kMiscNoUpdateLog, args, &out).ok());
  CHECK(out == Hex("c8 90 00000007 00000001 00000004") + "putlist" + Hex("00000002") + "k1" +
                   Hex("00000002") + "v1" + Hex("00000002") + "k2" + Hex("00000000"));
}

TEST_CASE("misc refuses more than 1048576 arguments", "[tokyotyrant]") {
  const std::vector<std::string_view> args(static_cast<std::size_t>(tt::kMaxItems) + 1, "a");
  std::string out;
  CHECK(tt::EncodeMisc("outlist", 0, args, &out).IsTooLarge());
  CHECK(out.empty());
}

TEST_CASE("fields over 256 MiB are refused before anything is written", "[tokyotyrant]") {
  const std::string& huge = HugeField();
  std::string out;
  CHECK(tt::EncodeStore(Command::kPut, "k", huge, &out).IsTooLarge());
  CHECK(tt::EncodeStore(Command::kPut, huge, "v", &out).IsTooLarge());
  CHECK(tt::EncodeKeyCommand(Command::kGet, huge, &out).IsTooLarge());
  const std::vector<std::string_view> keys = {"a", huge};
  CHECK(tt::EncodeMget(keys, &out).IsTooLarge());
  const std::vector<std::string_view> args = {huge};
  CHECK(tt::EncodeMisc("putlist", 0, args, &out).IsTooLarge());
  CHECK(out.empty());
}

TEST_CASE("a field of exactly 256 MiB is accepted", "[tokyotyrant]") {
  const std::string_view at_limit(HugeField().data(), static_cast<std::size_t>(tt::kMaxFieldSize));
  std::string out;
  REQUIRE(tt::EncodeStore(Command::kPut, "k", at_limit, &out).ok());
  CHECK(out.size() == 2 + 8 + 1 + at_limit.size());
  CHECK(out.substr(2, 8) == Hex("00000001 10000000"));
}
