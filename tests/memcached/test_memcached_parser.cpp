// The memcached reply parsers, byte by byte: every reply split at every offset,
// limits, and garbage that must be refused rather than guessed at.
#include <catch2/catch.hpp>
#include <deque>
#include <string>

#include "meta_parser.h"
#include "text_parser.h"

namespace cachet::memcached {
namespace {

using namespace std::string_literals;
using namespace std::string_view_literals;

// Parses `input` whole and checks that every strict prefix asks for more. The
// reply's views point into the input, so the input is kept alive for the test.
template <class Parser>
Reply ParseWhole(const Parser& parser, const std::string& input) {
  static std::deque<std::string> kept;
  const std::string& bytes = kept.emplace_back(input);
  Reply reply;
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO("prefix of " << cut << " bytes");
    ParseResult partial = parser.Parse(std::string_view(bytes).substr(0, cut), &reply);
    REQUIRE(partial.outcome == ParseOutcome::kNeedMore);
    REQUIRE(partial.consumed == 0);
  }
  ParseResult whole = parser.Parse(bytes, &reply);
  REQUIRE(whole.outcome == ParseOutcome::kReply);
  REQUIRE(whole.consumed == bytes.size());
  return reply;
}

template <class Parser>
Status ParseGarbage(const Parser& parser, const std::string& bytes) {
  Reply reply;
  ParseResult r = parser.Parse(bytes, &reply);
  REQUIRE(r.outcome == ParseOutcome::kError);
  return r.error;
}

}  // namespace

TEST_CASE("text: VALUE with and without cas, split at every offset", "[memcached][parser]") {
  TextReplyParser parser;
  Reply r = ParseWhole(parser, "VALUE k1 42 5 99\r\nhe\r\no\r\n");
  CHECK(r.kind == ReplyKind::kValue);
  CHECK(r.key == "k1");
  CHECK(r.flags == 42);
  CHECK(r.cas == 99);
  CHECK(r.data == "he\r\no");
  r = ParseWhole(parser, "VALUE k 4294967295 0\r\n\r\n");
  CHECK(r.flags == 4294967295u);
  CHECK(r.data.empty());
  CHECK(r.cas == 0);
}

TEST_CASE("text: one-line replies", "[memcached][parser]") {
  TextReplyParser parser;
  CHECK(ParseWhole(parser, "END\r\n").kind == ReplyKind::kEnd);
  CHECK(ParseWhole(parser, "STORED\r\n").kind == ReplyKind::kStored);
  CHECK(ParseWhole(parser, "NOT_STORED\r\n").kind == ReplyKind::kNotStored);
  CHECK(ParseWhole(parser, "EXISTS\r\n").kind == ReplyKind::kExists);
  CHECK(ParseWhole(parser, "NOT_FOUND\r\n").kind == ReplyKind::kNotFound);
  CHECK(ParseWhole(parser, "DELETED\r\n").kind == ReplyKind::kDeleted);
  CHECK(ParseWhole(parser, "TOUCHED\r\n").kind == ReplyKind::kTouched);
  CHECK(ParseWhole(parser, "OK\r\n").kind == ReplyKind::kOk);
  Reply n = ParseWhole(parser, "18446744073709551615\r\n");
  CHECK(n.kind == ReplyKind::kNumber);
  CHECK(n.number == 18446744073709551615ull);
  CHECK(ParseWhole(parser, "9999999999999999999\r\n").number == 9999999999999999999ull);
  CHECK(ParseWhole(parser, "0\r\n").number == 0);
  // One past the largest 64-bit number, and a digit too many, are no numbers.
  for (std::string_view bad : {"18446744073709551616\r\n", "99999999999999999999\r\n",
                               "100000000000000000000\r\n", "12a\r\n"}) {
    Reply r;
    CHECK(parser.Parse(bad, &r).outcome == ParseOutcome::kError);
  }
  Reply v = ParseWhole(parser, "VERSION 1.6.18\r\n");
  CHECK(v.kind == ReplyKind::kVersion);
  CHECK(v.text == "1.6.18");
  Reply s = ParseWhole(parser, "STAT curr_items 3\r\n");
  CHECK(s.kind == ReplyKind::kStat);
  CHECK(s.text == "curr_items");
  CHECK(s.stat_value == "3");
}

TEST_CASE("text: error lines keep the server's message", "[memcached][parser]") {
  TextReplyParser parser;
  CHECK(ParseWhole(parser, "ERROR\r\n").kind == ReplyKind::kError);
  Reply c = ParseWhole(parser, "CLIENT_ERROR bad data chunk\r\n");
  CHECK(c.kind == ReplyKind::kClientError);
  CHECK(c.text == "bad data chunk");
  Reply s = ParseWhole(parser, "SERVER_ERROR object too large for cache\r\n");
  CHECK(s.kind == ReplyKind::kServerError);
  CHECK(s.text == "object too large for cache");
}

TEST_CASE("text: a stream of replies parses one at a time", "[memcached][parser]") {
  TextReplyParser parser;
  std::string stream = "VALUE a 0 1\r\nx\r\nVALUE b 1 2\r\nyz\r\nEND\r\nSTORED\r\n";
  std::string_view rest = stream;
  std::vector<ReplyKind> kinds;
  for (int guard = 0; guard < 10 && !rest.empty(); ++guard) {
    Reply r;
    ParseResult p = parser.Parse(rest, &r);
    REQUIRE(p.outcome == ParseOutcome::kReply);
    kinds.push_back(r.kind);
    rest.remove_prefix(p.consumed);
  }
  CHECK(kinds == std::vector<ReplyKind>{ReplyKind::kValue, ReplyKind::kValue, ReplyKind::kEnd,
                                        ReplyKind::kStored});
}

TEST_CASE("text: garbage is a protocol error, never a guess", "[memcached][parser]") {
  TextReplyParser parser;
  for (const std::string& bad :
       {"HELLO\r\n"s, "STORED\n"s, "stored\r\n"s, "VALUE k x 1\r\na\r\n"s, "VALUE k 0 -1\r\n\r\n"s,
        "VALUE k 0 1 2 3\r\na\r\n"s, "VALUE  0 1\r\na\r\n"s, "VALUE k 0 2\r\nabcd\r\n"s,
        "VALUE k 4294967296 1\r\na\r\n"s, "18446744073709551616\r\n"s, "12a\r\n"s, "\r\n"s,
        "STORED \r\n"s, "VERSION\r\n"s, "\x00\x01\x02\r\n"s}) {
    INFO(bad);
    CHECK(ParseGarbage(parser, bad).IsProtocolError());
  }
}

// A line whose end has not arrived is waited for only while it can still become
// a reply; bytes that start none are refused at once.
TEST_CASE("text and meta: a partial line that can start no reply is garbage at once",
          "[memcached][parser]") {
  TextReplyParser text;
  MetaReplyParser meta;
  Reply r;
  for (std::string_view partial : {"V"sv, "VALUE"sv, "VALUE k 0"sv, "NOT_"sv, "SERVER_ERROR out"sv,
                                   "12"sv, "STORED\r"sv, "ERROR"sv, "STAT pid 1"sv}) {
    INFO(partial);
    CHECK(text.Parse(partial, &r).outcome == ParseOutcome::kNeedMore);
  }
  for (std::string_view partial : {"V"sv, "VA 3 f1"sv, "HD\r"sv, "EN"sv, "MN"sv, "CLIENT_"sv}) {
    INFO(partial);
    CHECK(meta.Parse(partial, &r).outcome == ParseOutcome::kNeedMore);
  }
  for (const std::string& bad : {"HELLO"s, "VALUX"s, "12 "s, "1a"s, "END\x15"s, "END\rX"s,
                                 "\x15\x03\x03"s, "value k"s}) {
    INFO(bad);
    CHECK(ParseGarbage(text, bad).IsProtocolError());
  }
  for (const std::string& bad : {"HELLO"s, "VALUE"s, "12"s, "VA3"s, "STORED"s}) {
    INFO(bad);
    CHECK(ParseGarbage(meta, bad).IsProtocolError());
  }
}

TEST_CASE("text: limits on lines and values", "[memcached][parser]") {
  TextReplyParser parser(ParserLimits{64, 10});
  // A line with no end beyond the limit is garbage, not a reason to wait forever.
  CHECK(ParseGarbage(parser, "SERVER_ERROR " + std::string(100, 'A')).IsProtocolError());
  CHECK(ParseGarbage(parser, "VALUE k 0 11\r\n").IsTooLarge());
  Reply r;
  CHECK(parser.Parse("VALUE k 0 10\r\n", &r).outcome == ParseOutcome::kNeedMore);
}

TEST_CASE("meta: VA with flags, split at every offset", "[memcached][parser]") {
  MetaReplyParser parser;
  Reply r = ParseWhole(parser, "VA 3 f7 c12 O5 t-1 s3\r\nabc\r\n");
  CHECK(r.kind == ReplyKind::kMetaValue);
  CHECK(r.data == "abc");
  CHECK(r.flags == 7);
  CHECK(r.cas == 12);
  CHECK(r.has_opaque);
  CHECK(r.opaque == 5);
  Reply k = ParseWhole(parser, "VA 0 kZm9v b\r\n\r\n");
  CHECK(k.key == "Zm9v");
  CHECK(k.data.empty());
}

TEST_CASE("meta: status codes", "[memcached][parser]") {
  MetaReplyParser parser;
  CHECK(ParseWhole(parser, "HD\r\n").kind == ReplyKind::kMetaHeader);
  Reply hd = ParseWhole(parser, "HD O3\r\n");
  CHECK(hd.opaque == 3);
  CHECK(ParseWhole(parser, "EN\r\n").kind == ReplyKind::kMetaMiss);
  CHECK(ParseWhole(parser, "NS O1\r\n").kind == ReplyKind::kNotStored);
  CHECK(ParseWhole(parser, "EX O1\r\n").kind == ReplyKind::kExists);
  CHECK(ParseWhole(parser, "NF O1\r\n").kind == ReplyKind::kNotFound);
  CHECK(ParseWhole(parser, "MN\r\n").kind == ReplyKind::kMetaNoop);
  CHECK(ParseWhole(parser, "CLIENT_ERROR bad command line format\r\n").kind ==
        ReplyKind::kClientError);
  CHECK(ParseWhole(parser, "SERVER_ERROR out of memory\r\n").kind == ReplyKind::kServerError);
}

TEST_CASE("meta: garbage is a protocol error", "[memcached][parser]") {
  MetaReplyParser parser;
  for (const std::string& bad :
       {"VA\r\n"s, "VA x\r\n"s, "VA 1 fz\r\na\r\n"s, "HD Ox\r\n"s, "HD O\r\n"s, "XX\r\n"s,
        "HDD\r\n"s, "VA 1\r\nab\r\n"s, "HD  f1\r\n"s, "HD c99999999999999999999\r\n"s,
        "VALUE k 0 1\r\na\r\n"s}) {
    INFO(bad);
    CHECK(ParseGarbage(parser, bad).IsProtocolError());
  }
}

TEST_CASE("meta: a VA over the value limit is too_large", "[memcached][parser]") {
  MetaReplyParser parser(ParserLimits{2048, 4});
  CHECK(ParseGarbage(parser, "VA 5 O1\r\n").IsTooLarge());
}

TEST_CASE("value headers are found before their data has arrived", "[memcached][parser]") {
  const TextReplyParser text(ParserLimits{2048, 1000});
  const MetaReplyParser meta(ParserLimits{2048, 1000});
  Reply reply;
  std::size_t offset = 0;
  std::uint64_t size = 0;
  REQUIRE(text.ValueHeader("VALUE key 5 900 77\r\nabc", &reply, &offset, &size));
  CHECK(reply.key == "key");
  CHECK(reply.flags == 5);
  CHECK(reply.cas == 77);
  CHECK(offset == 20);
  CHECK(size == 900);
  REQUIRE(meta.ValueHeader("VA 900 f3 O12\r\n", &reply, &offset, &size));
  CHECK(reply.flags == 3);
  CHECK(reply.opaque == 12);
  CHECK(offset == 15);
  CHECK(size == 900);
  // An incomplete line, another reply, a malformed line or a value over the limit: no header.
  CHECK_FALSE(text.ValueHeader("VALUE key 5 900", &reply, &offset, &size));
  CHECK_FALSE(text.ValueHeader("END\r\n", &reply, &offset, &size));
  CHECK_FALSE(text.ValueHeader("VALUE key x 900\r\n", &reply, &offset, &size));
  CHECK_FALSE(text.ValueHeader("VALUE key 0 1001\r\n", &reply, &offset, &size));
  CHECK_FALSE(meta.ValueHeader("VA 1001\r\n", &reply, &offset, &size));
  CHECK_FALSE(meta.ValueHeader("HD O1\r\n", &reply, &offset, &size));
}

}  // namespace cachet::memcached
