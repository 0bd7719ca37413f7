// The RESP2/RESP3 parser, byte by byte, without a server: every type, replies split
// at every offset, pipelined replies, limits, and garbage; and the frame loop
// (resp_frames.h) over it.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/net/read_buffer.h"

#include "resp_frames.h"
#include "resp_parser.h"

using cachet::redis::RespLimits;
using cachet::redis::RespParser;
using cachet::redis::RespType;
using cachet::redis::RespValue;
using Outcome = cachet::redis::RespParser::Outcome;
using namespace std::string_view_literals;

namespace {

// A compact text form of a reply tree, so whole trees compare in one CHECK.
std::string Render(RespValue v) {
  switch (v.type()) {
    case RespType::kSimpleString:
      return "+" + std::string(v.text());
    case RespType::kError:
      return "-" + std::string(v.text());
    case RespType::kBulkError:
      return "!" + std::string(v.text());
    case RespType::kBulkString:
      return "'" + std::string(v.text()) + "'";
    case RespType::kVerbatimString:
      return "=" + std::string(v.text());
    case RespType::kInteger:
      return std::to_string(v.integer());
    case RespType::kNull:
      return "nil";
    case RespType::kBoolean:
      return v.boolean() ? "true" : "false";
    case RespType::kDouble:
      return "d" + std::string(v.text());
    case RespType::kBigNumber:
      return "n" + std::string(v.text());
    default:
      break;
  }
  std::string open = v.type() == RespType::kMap    ? "{"
                     : v.type() == RespType::kSet  ? "~("
                     : v.type() == RespType::kPush ? ">("
                                                   : "[";
  std::string out = open;
  bool first = true;
  for (RespValue child : v) {
    if (!first) out += ",";
    out += Render(child);
    first = false;
  }
  return out + (v.type() == RespType::kMap ? "}" : v.type() == RespType::kArray ? "]" : ")");
}

// Parses one whole reply and renders it; "error: ..." on failure.
// The limits of a RESP3 (HELLO 3) connection, where pushes may come.
RespLimits Resp3() {
  RespLimits limits;
  limits.resp3 = true;
  return limits;
}

std::string ParseWhole(std::string_view bytes, RespLimits limits = Resp3()) {
  RespParser parser(limits);
  switch (parser.Parse(bytes)) {
    case Outcome::kReply:
      if (parser.consumed() != bytes.size()) return "trailing bytes";
      return Render(parser.reply().root());
    case Outcome::kNeedMore:
      return "need more";
    case Outcome::kError:
      return "error: " + parser.error().ToString();
  }
  return "?";
}

bool Fails(std::string_view bytes, RespLimits limits = Resp3()) {
  return ParseWhole(bytes, limits).rfind("error: ", 0) == 0;
}

// One reply using every type, nested, with attributes in two places.
constexpr std::string_view kEveryType =
    "*13\r\n+OK\r\n-ERR bad\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n*-1\r\n_\r\n"
    "%2\r\n+key\r\n$1\r\nv\r\n$0\r\n\r\n_\r\n~2\r\n#t\r\n#f\r\n"
    "*3\r\n,3.25\r\n,-inf\r\n(-12345678901234567890\r\n"
    "|1\r\n+ttl\r\n:5\r\n=8\r\ntxt:text\r\n"
    "!9\r\nERR error\r\n*2\r\n*0\r\n*1\r\n*0\r\n";
constexpr std::string_view kEveryTypeRendered =
    "[+OK,-ERR bad,-42,'he\r\no',nil,nil,nil,{+key,'v','',nil},~(true,false),"
    "[d3.25,d-inf,n-12345678901234567890],=text,!ERR error,[[],[[]]]]";

}  // namespace

TEST_CASE("every RESP2 and RESP3 type parses", "[resp]") {
  CHECK(ParseWhole("+OK\r\n") == "+OK");
  CHECK(ParseWhole("-WRONGTYPE no\r\n") == "-WRONGTYPE no");
  CHECK(ParseWhole(":9223372036854775807\r\n") == "9223372036854775807");
  CHECK(ParseWhole("$0\r\n\r\n") == "''");
  CHECK(ParseWhole("$-1\r\n") == "nil");
  CHECK(ParseWhole("_\r\n") == "nil");
  CHECK(ParseWhole(">2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n") == ">(+invalidate,['k'])");
  CHECK(ParseWhole(",1e300\r\n") == "d1e300");
  CHECK(ParseWhole(",nan\r\n") == "dnan");
  CHECK(ParseWhole("=4\r\nmkd:\r\n") == "=");
  CHECK(ParseWhole(kEveryType) == kEveryTypeRendered);
}

TEST_CASE("an attribute is skipped, at the top and inside aggregates", "[resp]") {
  CHECK(ParseWhole("|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n:7\r\n") == "7");
  CHECK(ParseWhole("*2\r\n|0\r\n:1\r\n|1\r\n:0\r\n:0\r\n:2\r\n") == "[1,2]");
}

TEST_CASE("a reply split at every byte offset parses the same", "[resp]") {
  const std::string bytes(kEveryType);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    CAPTURE(cut);
    RespParser parser;
    // The first piece is incomplete; the parser keeps its progress for the second.
    REQUIRE(parser.Parse(std::string_view(bytes).substr(0, cut)) == Outcome::kNeedMore);
    REQUIRE(parser.bytes_wanted() > cut);
    REQUIRE(parser.Parse(bytes) == Outcome::kReply);
    CHECK(parser.consumed() == bytes.size());
    CHECK(Render(parser.reply().root()) == kEveryTypeRendered);
  }
}

TEST_CASE("a reply fed one byte at a time parses the same", "[resp]") {
  const std::string bytes(kEveryType);
  RespParser parser;
  std::string buffer;
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    // Each call gets a fresh copy, so nothing may point into an older buffer.
    buffer.assign(bytes, 0, i + 1);
    std::string moved = buffer;
    REQUIRE(parser.Parse(moved) == Outcome::kNeedMore);
  }
  std::string whole = bytes;
  REQUIRE(parser.Parse(whole) == Outcome::kReply);
  CHECK(Render(parser.reply().root()) == kEveryTypeRendered);
  CHECK(parser.reply().bytes() == bytes);
}

TEST_CASE("bytes_wanted covers a whole bulk payload", "[resp]") {
  RespParser parser;
  REQUIRE(parser.Parse("$10\r\n01") == Outcome::kNeedMore);
  CHECK(parser.bytes_wanted() == 5 + 10 + 2);
}

TEST_CASE("pipelined replies come out one at a time", "[resp]") {
  std::string_view bytes = "+OK\r\n:1\r\n$1\r\nx\r\n$2\r\nab";
  RespParser parser;
  REQUIRE(parser.Parse(bytes) == Outcome::kReply);
  CHECK(Render(parser.reply().root()) == "+OK");
  bytes.remove_prefix(parser.consumed());
  REQUIRE(parser.Parse(bytes) == Outcome::kReply);
  CHECK(parser.reply().root().integer() == 1);
  bytes.remove_prefix(parser.consumed());
  REQUIRE(parser.Parse(bytes) == Outcome::kReply);
  CHECK(parser.reply().root().text() == "x");
  bytes.remove_prefix(parser.consumed());
  CHECK(parser.Parse(bytes) == Outcome::kNeedMore);
}

TEST_CASE("fields are found in RESP2 pair arrays and RESP3 maps", "[resp]") {
  for (std::string_view bytes : {"*4\r\n$4\r\nname\r\n$1\r\na\r\n$4\r\nport\r\n:7000\r\n"sv,
                                 "%2\r\n+name\r\n+a\r\n+port\r\n:7000\r\n"sv}) {
    RespParser parser;
    REQUIRE(parser.Parse(bytes) == Outcome::kReply);
    RespValue port = parser.reply().root();
    REQUIRE(parser.reply().root().FindField("port", &port));
    CHECK(port.integer() == 7000);
    CHECK_FALSE(parser.reply().root().FindField("7000", &port));
    CHECK(parser.reply().root()[1].text() == "a");
  }
}

TEST_CASE("malformed replies are protocol errors", "[resp]") {
  for (std::string_view bytes : {"hello\r\n"sv,
                                 "\r\n"sv,
                                 ":abc\r\n"sv,
                                 ":\r\n"sv,
                                 ":1\n"sv,
                                 ":+1\r\n"sv,
                                 ":9223372036854775808\r\n"sv,
                                 "$3\r\nfooX\r\n"sv,
                                 "$3\r\nfoo\n\r"sv,
                                 "$-2\r\n"sv,
                                 "$x\r\n"sv,
                                 "*-2\r\n"sv,
                                 "*1x\r\n"sv,
                                 "%-1\r\n"sv,
                                 "~-1\r\n"sv,
                                 "#x\r\n"sv,
                                 "#\r\n"sv,
                                 ",abc\r\n"sv,
                                 ",\r\n"sv,
                                 "(12a\r\n"sv,
                                 "(-\r\n"sv,
                                 "=3\r\nabc\r\n"sv,
                                 "=5\r\nabcde\r\n"sv,
                                 "_x\r\n"sv,
                                 "$?\r\n"sv,
                                 "*?\r\n"sv,
                                 "|-1\r\n"sv,
                                 "!-1\r\n"sv,
                                 "+OK\rX\n"sv,
                                 "*1\r\n\0\r\n"sv}) {
    CAPTURE(bytes);
    CHECK(ParseWhole(bytes).rfind("error: protocol_error", 0) == 0);
  }
}

TEST_CASE("bytes that start no frame are refused before a line end arrives", "[resp]") {
  // Garbage without a line end would otherwise be waited on until the I/O timeout.
  for (std::string_view bytes : {"h"sv, "hello"sv, "\x00\x01"sv, "*1\r\nX"sv}) {
    CAPTURE(bytes);
    RespParser parser;
    CHECK(parser.Parse(bytes) == Outcome::kError);
    CHECK(parser.error().IsProtocolError());
  }
  // A type byte alone is the start of a frame: more is needed.
  for (std::string_view bytes : {"+"sv, "$12"sv, "*1\r\n$"sv, ">2"sv, "|1"sv}) {
    CAPTURE(bytes);
    RespParser parser;
    CHECK(parser.Parse(bytes) == Outcome::kNeedMore);
  }
}

TEST_CASE("an error is sticky until Reset", "[resp]") {
  RespParser parser;
  REQUIRE(parser.Parse("?\r\n") == Outcome::kError);
  CHECK(parser.error().IsProtocolError());
  CHECK(parser.Parse("+OK\r\n") == Outcome::kError);
  parser.Reset();
  REQUIRE(parser.Parse("+OK\r\n") == Outcome::kReply);
  CHECK(parser.reply().root().text() == "OK");
}

TEST_CASE("limits bound what a server can make the client hold", "[resp]") {
  RespLimits limits;
  limits.max_bulk_length = 100;
  limits.max_line_length = 50;
  limits.max_depth = 3;
  limits.max_elements = 10;
  limits.max_nodes = 20;

  CHECK(ParseWhole("$100\r\n" + std::string(100, 'x') + "\r\n", limits).size() > 100);
  CHECK(ParseWhole("$101\r\n", limits).rfind("error: too_large", 0) == 0);
  CHECK(ParseWhole("$99999999999999999999999\r\n", limits).rfind("error: protocol_error", 0) == 0);
  CHECK(Fails("+" + std::string(51, 'x') + "\r\n", limits));
  // A line with no end in sight fails before it ends.
  CHECK(Fails("+" + std::string(60, 'x'), limits));
  CHECK(ParseWhole("+" + std::string(50, 'x') + "\r\n", limits).size() == 51);
  CHECK(ParseWhole("*1\r\n*1\r\n*1\r\n:1\r\n", limits) == "[[[1]]]");
  CHECK(Fails("*1\r\n*1\r\n*1\r\n*1\r\n", limits));
  CHECK(Fails("*11\r\n", limits));
  CHECK(Fails("%6\r\n", limits));
  CHECK(Fails("|6\r\n", limits));
  std::string many = "*2\r\n*10\r\n" + std::string("");
  for (int i = 0; i < 10; ++i) many += ":1\r\n";
  many += "*10\r\n";
  for (int i = 0; i < 10; ++i) many += ":1\r\n";
  CHECK(Fails(many, limits));  // 23 nodes, over max_nodes
}

TEST_CASE("default limits reject absurd sizes before allocating", "[resp]") {
  CHECK(Fails("$536870913\r\n"));
  CHECK(Fails("*1048577\r\n"));
  std::string deep;
  for (int i = 0; i < 17; ++i) deep += "*1\r\n";
  CHECK(Fails(deep));
}

TEST_CASE("random garbage never crashes and never overreads", "[resp]") {
  std::mt19937 random(12345);
  const std::string alphabet = "+-:$*%~>|_#,(=!\r\n0123456789-?tfab";
  int replies = 0;
  int errors = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(random() % 40, '\0');
    for (char& c : bytes) c = alphabet[random() % alphabet.size()];
    RespParser parser;
    Outcome outcome = parser.Parse(bytes);
    if (outcome == Outcome::kReply) {
      ++replies;
      REQUIRE(parser.consumed() <= bytes.size());
      REQUIRE(parser.reply().node_count() > 0);
      (void)Render(parser.reply().root());
    } else if (outcome == Outcome::kError) {
      ++errors;
      REQUIRE_FALSE(parser.error().ok());
    }
  }
  // The alphabet makes both outcomes common; a parser that accepted or rejected
  // everything would fail here.
  CHECK(replies > 10);
  CHECK(errors > 1000);
}

namespace {

// A read buffer holding `bytes`.
void Fill(cachet::net::ReadBuffer& buffer, std::string_view bytes) {
  char* at = buffer.PrepareWrite(bytes.size());
  std::memcpy(at, bytes.data(), bytes.size());
  buffer.Commit(bytes.size());
}

}  // namespace

TEST_CASE("the frame loop hands on each whole frame and stops where its reader says",
          "[resp][frames]") {
  using cachet::redis::Frame;
  using cachet::redis::RespValue;
  using cachet::redis::TakeFrames;
  const std::string where = "127.0.0.1:1";
  SECTION("every whole frame, then a partial one stays") {
    RespParser parser;
    cachet::net::ReadBuffer buffer;
    Fill(buffer, "+a\r\n:2\r\n$3\r\nab");
    std::vector<std::string> seen;
    REQUIRE(TakeFrames(parser, buffer, where, [&](RespValue frame, Frame&) {
              seen.push_back(Render(frame));
              return cachet::Status::OK();
            }).ok());
    CHECK(seen == std::vector<std::string>{"+a", "2"});
    CHECK(buffer.data() == "$3\r\nab");
    Fill(buffer, "c\r\n");
    REQUIRE(TakeFrames(parser, buffer, where, [&](RespValue frame, Frame&) {
              seen.push_back(Render(frame));
              return cachet::Status::OK();
            }).ok());
    CHECK(seen.back() == "'abc'");
    CHECK(buffer.empty());
  }
  SECTION("kLast takes the frame and stops; kLeft leaves it; an error takes it and ends") {
    for (const Frame verdict : {Frame::kLast, Frame::kLeft}) {
      RespParser parser;
      cachet::net::ReadBuffer buffer;
      Fill(buffer, "+a\r\n+b\r\n");
      int calls = 0;
      REQUIRE(TakeFrames(parser, buffer, where, [&](RespValue, Frame& next) {
                ++calls;
                next = verdict;
                return cachet::Status::OK();
              }).ok());
      CHECK(calls == 1);
      CHECK(buffer.data() == (verdict == Frame::kLast ? "+b\r\n" : "+a\r\n+b\r\n"));
    }
    RespParser parser;
    cachet::net::ReadBuffer buffer;
    Fill(buffer, "+a\r\n+b\r\n");
    const cachet::Status s = TakeFrames(parser, buffer, where, [&](RespValue, Frame&) {
      return cachet::Status::ProtocolError("not mine");
    });
    CHECK(s.IsProtocolError());
    CHECK(buffer.data() == "+b\r\n");
  }
  SECTION("a parser failure names the server, too_large kept") {
    RespLimits limits;
    limits.max_bulk_length = 10;
    RespParser big(limits);
    cachet::net::ReadBuffer buffer;
    Fill(buffer, "$11\r\n");
    int calls = 0;
    const auto count = [&](RespValue, Frame&) {
      ++calls;
      return cachet::Status::OK();
    };
    const cachet::Status too_large = TakeFrames(big, buffer, where, count);
    CHECK(too_large.IsTooLarge());
    CHECK(too_large.message().rfind("redis 127.0.0.1:1: ", 0) == 0);
    RespParser garbage;
    cachet::net::ReadBuffer bad_bytes;
    Fill(bad_bytes, "?what\r\n");
    const cachet::Status bad = TakeFrames(garbage, bad_bytes, where, count);
    CHECK(bad.code() == cachet::StatusCode::kProtocolError);
    CHECK(bad.message().rfind("redis 127.0.0.1:1: ", 0) == 0);
    CHECK(calls == 0);
  }
}

TEST_CASE("a push is only ever a frame of its own, never inside a reply", "[resp][push]") {
  cachet::redis::RespParser parser(Resp3());
  CHECK(parser.Parse("*2\r\n$1\r\na\r\n>1\r\n$1\r\nb\r\n") == cachet::redis::RespParser::Outcome::kError);
  CHECK(parser.error().IsProtocolError());
  CHECK(parser.error().message().find("push inside a reply") != std::string_view::npos);
  parser.Reset();
  CHECK(parser.Parse(">1\r\n$1\r\nb\r\n") == cachet::redis::RespParser::Outcome::kReply);
}

TEST_CASE("a push on a RESP2 connection is a protocol error", "[resp][push]") {
  const std::string_view push = ">2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n";
  CHECK(ParseWhole(push, Resp3()) == ">(+invalidate,['k'])");
  const std::string resp2 = ParseWhole(push, RespLimits{});
  CHECK(resp2.rfind("error: protocol_error", 0) == 0);
  CHECK(resp2.find("RESP2") != std::string::npos);
  // Also behind an attribute, and split so the '>' line comes alone.
  CHECK(Fails("|1\r\n+a\r\n:1\r\n" + std::string(push), RespLimits{}));
  cachet::redis::RespParser parser;
  CHECK(parser.Parse(">2\r") == cachet::redis::RespParser::Outcome::kNeedMore);
  CHECK(parser.Parse(">2\r\n") == cachet::redis::RespParser::Outcome::kError);
  CHECK(parser.error().IsProtocolError());
}
