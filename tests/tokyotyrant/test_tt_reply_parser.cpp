// Tokyo Tyrant reply parser: every reply shape, fed whole and split at every
// offset, and every framing doubt reported as protocol_error.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tt_bytes.h"
#include "tt_reply_parser.h"

namespace tt = cachet::tokyotyrant;
using cachet::test::Hex;
using cachet::StatusCode;
using tt::ReplyShape;

namespace {

struct Parsed {
  tt::ParseState state = tt::ParseState::kNeedMore;
  bool ok = false;
  std::size_t consumed = 0;
  std::vector<std::string> fields;
  std::int32_t int32 = 0;
  std::uint64_t uint64 = 0;
  std::int64_t integer = 0;
  std::int64_t fraction = 0;
};

Parsed Snapshot(const tt::ReplyParser& parser, tt::ParseState state, std::string_view buffer) {
  Parsed p;
  p.state = state;
  if (state != tt::ParseState::kDone) return p;
  const tt::Reply& r = parser.reply();
  p.ok = r.ok;
  p.consumed = parser.consumed();
  for (std::size_t i = 0; i < r.fields.size(); ++i) p.fields.emplace_back(r.Field(buffer, i));
  p.int32 = r.int32;
  p.uint64 = r.uint64;
  p.integer = r.integer;
  p.fraction = r.fraction;
  return p;
}

Parsed ParseWhole(ReplyShape shape, std::string_view bytes) {
  tt::ReplyParser parser;
  parser.Start(shape);
  return Snapshot(parser, parser.Parse(bytes), bytes);
}

// Feeds the first `split` bytes, then all of them, as a socket would deliver.
Parsed ParseSplit(ReplyShape shape, std::string_view bytes, std::size_t split) {
  tt::ReplyParser parser;
  parser.Start(shape);
  const tt::ParseState first = parser.Parse(bytes.substr(0, split));
  if (first != tt::ParseState::kNeedMore) return Snapshot(parser, first, bytes.substr(0, split));
  return Snapshot(parser, parser.Parse(bytes), bytes);
}

// Feeds one byte more each time, resuming every call.
Parsed ParseByteByByte(ReplyShape shape, std::string_view bytes) {
  tt::ReplyParser parser;
  parser.Start(shape);
  tt::ParseState state = tt::ParseState::kNeedMore;
  std::size_t n = 0;
  for (; n <= bytes.size() && state == tt::ParseState::kNeedMore; ++n) {
    state = parser.Parse(bytes.substr(0, n));
  }
  return Snapshot(parser, state, bytes.substr(0, n - 1));
}

void CheckSame(const Parsed& a, const Parsed& b) {
  CHECK(a.state == b.state);
  CHECK(a.ok == b.ok);
  CHECK(a.consumed == b.consumed);
  CHECK(a.fields == b.fields);
  CHECK(a.int32 == b.int32);
  CHECK(a.uint64 == b.uint64);
  CHECK(a.integer == b.integer);
  CHECK(a.fraction == b.fraction);
}

// Parses `bytes` whole, at every split and byte by byte; every way must agree,
// and no proper prefix may be mistaken for the whole reply.
Parsed ParseEveryWay(ReplyShape shape, std::string_view bytes) {
  const Parsed whole = ParseWhole(shape, bytes);
  REQUIRE(whole.state == tt::ParseState::kDone);
  REQUIRE(whole.consumed == bytes.size());
  for (std::size_t split = 0; split < bytes.size(); ++split) {
    INFO("split at " << split);
    CheckSame(ParseSplit(shape, bytes, split), whole);
    tt::ReplyParser prefix;
    prefix.Start(shape);
    CHECK(prefix.Parse(bytes.substr(0, split)) == tt::ParseState::kNeedMore);
  }
  CheckSame(ParseByteByByte(shape, bytes), whole);
  return whole;
}

std::string ErrorOf(ReplyShape shape, std::string_view bytes,
                    StatusCode code = StatusCode::kProtocolError) {
  tt::ReplyParser parser;
  parser.Start(shape);
  if (parser.Parse(bytes) != tt::ParseState::kError) return "no error";
  REQUIRE(parser.error().code() == code);
  return std::string(parser.error().message());
}

}  // namespace

TEST_CASE("status replies: 00 is ok, 01 failed", "[tokyotyrant]") {
  CHECK(ParseEveryWay(ReplyShape::kStatus, Hex("00")).ok);
  CHECK_FALSE(ParseEveryWay(ReplyShape::kStatus, Hex("01")).ok);
}

TEST_CASE("putnr expects no reply and consumes nothing", "[tokyotyrant]") {
  tt::ReplyParser parser;
  parser.Start(ShapeOf(tt::Command::kPutNr));
  CHECK(parser.Parse(Hex("00")) == tt::ParseState::kDone);
  CHECK(parser.consumed() == 0);
  CHECK(parser.reply().ok);
}

TEST_CASE("reply shapes follow the commands", "[tokyotyrant]") {
  using tt::Command;
  CHECK(ShapeOf(Command::kPut) == ReplyShape::kStatus);
  CHECK(ShapeOf(Command::kOut) == ReplyShape::kStatus);
  CHECK(ShapeOf(Command::kCopy) == ReplyShape::kStatus);
  CHECK(ShapeOf(Command::kGet) == ReplyShape::kBytes);
  CHECK(ShapeOf(Command::kStat) == ReplyShape::kBytes);
  CHECK(ShapeOf(Command::kIterNext) == ReplyShape::kBytes);
  CHECK(ShapeOf(Command::kVsiz) == ReplyShape::kInt32);
  CHECK(ShapeOf(Command::kAddInt) == ReplyShape::kInt32);
  CHECK(ShapeOf(Command::kAddDouble) == ReplyShape::kDouble);
  CHECK(ShapeOf(Command::kRnum) == ReplyShape::kUint64);
  CHECK(ShapeOf(Command::kMget) == ReplyShape::kKeyValueList);
  CHECK(ShapeOf(Command::kFwmKeys) == ReplyShape::kKeyList);
  CHECK(ShapeOf(Command::kMisc) == ReplyShape::kMiscList);
}

TEST_CASE("get: 00 vsiz value, or 01 alone", "[tokyotyrant]") {
  const Parsed hit = ParseEveryWay(ReplyShape::kBytes, Hex("00 00000005") + "hello");
  CHECK(hit.ok);
  CHECK(hit.fields == std::vector<std::string>{"hello"});
  const Parsed empty = ParseEveryWay(ReplyShape::kBytes, Hex("00 00000000"));
  CHECK(empty.fields == std::vector<std::string>{""});
  const Parsed miss = ParseEveryWay(ReplyShape::kBytes, Hex("01"));
  CHECK_FALSE(miss.ok);
  CHECK(miss.fields.empty());
}

TEST_CASE("a reply stops at its own end, the next reply's bytes are left", "[tokyotyrant]") {
  const Parsed p = ParseWhole(ReplyShape::kBytes, Hex("00 00000002") + "ab" + Hex("01"));
  CHECK(p.consumed == 7);
  CHECK(ParseWhole(ReplyShape::kStatus, Hex("00 00")).consumed == 1);
}

TEST_CASE("vsiz and addint: a signed 32-bit number", "[tokyotyrant]") {
  CHECK(ParseEveryWay(ReplyShape::kInt32, Hex("00 0000000c")).int32 == 12);
  CHECK(ParseEveryWay(ReplyShape::kInt32, Hex("00 fffffffd")).int32 == -3);
  CHECK_FALSE(ParseEveryWay(ReplyShape::kInt32, Hex("01")).ok);
}

TEST_CASE("adddouble: integer and fraction", "[tokyotyrant]") {
  const Parsed p = ParseEveryWay(ReplyShape::kDouble, Hex("00 ffffffffffffffff ffffff8b95ad7800"));
  CHECK(p.integer == -1);
  CHECK(p.fraction == -500000000000);
  CHECK_FALSE(ParseEveryWay(ReplyShape::kDouble, Hex("01")).ok);
}

TEST_CASE("rnum and size: an unsigned 64-bit number", "[tokyotyrant]") {
  CHECK(ParseEveryWay(ReplyShape::kUint64, Hex("00 8000000000000001")).uint64 ==
        0x8000000000000001ull);
}

TEST_CASE("stat: one text field", "[tokyotyrant]") {
  const std::string text = "version\t1.1.41\nrnum\t3\n";
  const Parsed p = ParseEveryWay(ReplyShape::kBytes, Hex("00 00000016") + text);
  CHECK(p.fields == std::vector<std::string>{text});
}

TEST_CASE("mget: both sizes first, then key and value, in order", "[tokyotyrant]") {
  const std::string bytes = Hex("00 00000003") + Hex("00000001 00000002") + "a" + "v1" +
                            Hex("00000002 00000000") + "bb" + Hex("00000001 00000002") + "a" + "v1";
  const Parsed p = ParseEveryWay(ReplyShape::kKeyValueList, bytes);
  CHECK(p.ok);
  CHECK(p.fields == std::vector<std::string>{"a", "v1", "bb", "", "a", "v1"});
  CHECK(ParseEveryWay(ReplyShape::kKeyValueList, Hex("00 00000000")).fields.empty());
}

TEST_CASE("fwmkeys: a count then keys", "[tokyotyrant]") {
  const std::string bytes = Hex("00 00000002 00000003") + "u:1" + Hex("00000003") + "u:2";
  CHECK(ParseEveryWay(ReplyShape::kKeyList, bytes).fields ==
        std::vector<std::string>{"u:1", "u:2"});
}

TEST_CASE("misc: a count then elements, failure is exactly 01 00000000", "[tokyotyrant]") {
  const std::string bytes = Hex("00 00000002 00000001") + "k" + Hex("00000003") + "val";
  CHECK(ParseEveryWay(ReplyShape::kMiscList, bytes).fields == std::vector<std::string>{"k", "val"});
  const Parsed failed = ParseEveryWay(ReplyShape::kMiscList, Hex("01 00000000"));
  CHECK_FALSE(failed.ok);
  CHECK(failed.consumed == 5);
  CHECK(ParseWhole(ReplyShape::kMiscList, Hex("01")).state == tt::ParseState::kNeedMore);
  CHECK(ErrorOf(ReplyShape::kMiscList, Hex("01 00000001")).find("misc failure") !=
        std::string::npos);
}

TEST_CASE("a status byte other than 0 or 1 is a protocol error", "[tokyotyrant]") {
  CHECK(ErrorOf(ReplyShape::kStatus, Hex("02")).find("status byte 2") != std::string::npos);
  CHECK(ErrorOf(ReplyShape::kBytes, Hex("c8")) != "no error");
  CHECK(ErrorOf(ReplyShape::kKeyValueList, Hex("ff")) != "no error");
}

TEST_CASE("negative sizes and counts are protocol errors", "[tokyotyrant]") {
  CHECK(ErrorOf(ReplyShape::kBytes, Hex("00 ffffffff")).find("negative") != std::string::npos);
  CHECK(ErrorOf(ReplyShape::kKeyValueList, Hex("00 80000000")) != "no error");
  CHECK(ErrorOf(ReplyShape::kKeyValueList, Hex("00 00000001 00000001 fffffffe")) != "no error");
  CHECK(ErrorOf(ReplyShape::kKeyList, Hex("00 00000001 ffffffff")) != "no error");
  CHECK(ErrorOf(ReplyShape::kMiscList, Hex("00 00000001 ffffffff")) != "no error");
}

// ttserver's limits bind requests; stored data grown past them by putcat is
// real, so a value's size (or a misc or fwmkeys count) over them is too_large
// (the server is not counted as failing). What the request bounds, mget's
// count and a key's size, is a protocol error: the stream is out of step.
TEST_CASE("stored data over the limits is too_large, what the request bounds a protocol error",
          "[tokyotyrant]") {
  constexpr StatusCode kTooLarge = StatusCode::kTooLarge;
  CHECK(ErrorOf(ReplyShape::kBytes, Hex("00 10000001"), kTooLarge)
            .find("size 268435457 is over the 268435456 cachet reads") != std::string::npos);
  CHECK(ErrorOf(ReplyShape::kMiscList, Hex("00 00100001"), kTooLarge) != "no error");
  CHECK(ErrorOf(ReplyShape::kKeyList, Hex("00 00100001"), kTooLarge) != "no error");
  CHECK(ErrorOf(ReplyShape::kKeyValueList, Hex("00 00000001 00000001 10000001"), kTooLarge) !=
        "no error");
  CHECK(ErrorOf(ReplyShape::kKeyValueList, Hex("00 00100001")).find("its request allows") !=
        std::string::npos);
  CHECK(ErrorOf(ReplyShape::kKeyValueList, Hex("00 00000001 10000001 00000001")) != "no error");
  CHECK(ErrorOf(ReplyShape::kKeyList, Hex("00 00000001 10000001")) != "no error");
  // Exactly at the limits is still a valid frame, waiting for its bytes.
  CHECK(ParseWhole(ReplyShape::kBytes, Hex("00 10000000")).state == tt::ParseState::kNeedMore);
  CHECK(ParseWhole(ReplyShape::kKeyList, Hex("00 00100000")).state == tt::ParseState::kNeedMore);
}

TEST_CASE("a parser is reused from reply to reply", "[tokyotyrant]") {
  tt::ReplyParser parser;
  const std::string first = Hex("00 00000002 00000001") + "a" + Hex("00000001") + "b";
  parser.Start(ReplyShape::kKeyList);
  REQUIRE(parser.Parse(first) == tt::ParseState::kDone);
  CHECK(parser.reply().fields.size() == 2);
  parser.Start(ReplyShape::kStatus);
  REQUIRE(parser.Parse(Hex("01")) == tt::ParseState::kDone);
  CHECK_FALSE(parser.reply().ok);
  CHECK(parser.reply().fields.empty());
  CHECK(parser.consumed() == 1);
}
