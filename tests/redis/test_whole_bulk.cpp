// ReadWholeBulk, the MGET element reader beside the general parser: what it
// takes, what it leaves to the parser, and that whatever it takes the parser
// reads the same (bytes consumed, nil or value) under the same limits, for
// well-formed, malformed, cut-short and over-limit elements.
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "resp_parser.h"
#include "whole_bulk.h"

using cachet::redis::ReadWholeBulk;
using cachet::redis::RespLimits;
using cachet::redis::RespParser;
using cachet::redis::WholeBulk;
using namespace std::string_view_literals;

namespace {

// The parser's reading of `input`: kReply with its bytes and value, or not.
struct ParserReading {
  RespParser::Outcome outcome = RespParser::Outcome::kNeedMore;
  std::size_t consumed = 0;
  bool nil = false;
  std::string text;
};

ParserReading ParserReads(std::string_view input, const RespLimits& limits) {
  RespParser parser(limits);
  ParserReading reading;
  reading.outcome = parser.Parse(input);
  if (reading.outcome == RespParser::Outcome::kReply) {
    reading.consumed = parser.consumed();
    reading.nil = parser.reply().root().IsNull();
    reading.text = std::string(parser.reply().root().text());
  }
  return reading;
}

// Whatever the fast reader takes, the parser takes the same way. Returns
// whether the fast reader took it.
bool AgreesWithParser(std::string_view input, const RespLimits& limits) {
  WholeBulk element;
  const bool taken = ReadWholeBulk(input, limits, &element);
  if (!taken) return false;
  const ParserReading parsed = ParserReads(input, limits);
  INFO("input '" << std::string(input) << "'");
  REQUIRE(parsed.outcome == RespParser::Outcome::kReply);
  CHECK(parsed.consumed == element.size);
  CHECK(parsed.nil == element.nil);
  CHECK(parsed.text == std::string(element.data));
  return true;
}

std::string Bulk(std::string_view value) {
  return "$" + std::to_string(value.size()) + "\r\n" + std::string(value) + "\r\n";
}

}  // namespace

TEST_CASE("whole bulk strings and nils are read with their sizes", "[resp][mget]") {
  const RespLimits limits;
  WholeBulk element;
  REQUIRE(ReadWholeBulk("$3\r\nabc\r\n$1\r\nz\r\n", limits, &element));
  CHECK(element.data == "abc");
  CHECK(element.size == 9);
  CHECK_FALSE(element.nil);

  REQUIRE(ReadWholeBulk("$0\r\n\r\n", limits, &element));
  CHECK(element.data.empty());
  CHECK(element.size == 6);
  CHECK_FALSE(element.nil);

  REQUIRE(ReadWholeBulk("$-1\r\n$1\r\nz\r\n", limits, &element));
  CHECK(element.nil);
  CHECK(element.size == 5);

  REQUIRE(ReadWholeBulk("_\r\n$1\r\nz\r\n", limits, &element));
  CHECK(element.nil);
  CHECK(element.size == 3);

  // Any bytes inside the value, CRLF included; the length decides.
  REQUIRE(ReadWholeBulk("$4\r\n\r\n\0x\r\n"sv, limits, &element));
  CHECK(element.data == "\r\n\0x"sv);
  CHECK(element.size == 10);

  const std::string big(12345, 'v');
  const std::string big_reply = Bulk(big);  // the element points into it
  REQUIRE(ReadWholeBulk(big_reply, limits, &element));
  CHECK(element.data == big);
  // Leading zeros are a length like any other, as the parser reads them.
  REQUIRE(ReadWholeBulk("$003\r\nabc\r\n", limits, &element));
  CHECK(element.data == "abc");
}

TEST_CASE("an element cut short at any byte is left to the parser", "[resp][mget]") {
  const RespLimits limits;
  for (const std::string& whole : {Bulk("hello"), Bulk(""), Bulk(std::string(150, 'q')),
                                   std::string("$-1\r\n"), std::string("_\r\n")}) {
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
      INFO("'" << whole << "' cut at " << cut);
      WholeBulk element;
      CHECK_FALSE(ReadWholeBulk(std::string_view(whole).substr(0, cut), limits, &element));
    }
    CHECK(AgreesWithParser(whole, limits));
  }
}

TEST_CASE("other types and malformed elements are left to the parser", "[resp][mget]") {
  const RespLimits limits;
  const char* const others[] = {
      "-ERR wrong\r\n",  // an error reply inside the array
      "+OK\r\n",
      ":12\r\n",
      "*1\r\n$1\r\nx\r\n",
      "!3\r\nbad\r\n",
      "=7\r\ntxt:abc\r\n",
      "$\r\n\r\n",  // no length
      "$-2\r\n",
      "$-0\r\n\r\n",
      "$+1\r\nx\r\n",
      "$ 1\r\nx\r\n",
      "$1 \r\nx\r\n",
      "$1x\r\nx\r\n",
      "$1\nx\r\n",
      "$1\rx\r\n",  // the length line not ended by CRLF
      "$3\r\nabcX\n",
      "$3\r\nabc\rX",
      "$3\r\nabcde\r\n",  // the data not ended by CRLF
      "$-1\n",
      "$-1x\r\n",
      "$-10\r\n",
      "_x\r\n",
      "_\n\r",
      "$99999999999999999999\r\n",  // 20 digits: past what the reader parses
      "$?\r\n;3\r\nabc\r\n;0\r\n",  // a streamed string
      "",
      "$",
      "$1",
      "\r\n",
  };
  for (const char* other : others) {
    INFO("'" << other << "'");
    WholeBulk element;
    CHECK_FALSE(ReadWholeBulk(other, limits, &element));
  }
}

TEST_CASE("elements over a limit are left to the parser to refuse", "[resp][mget]") {
  WholeBulk element;
  RespLimits small_bulk;
  small_bulk.max_bulk_length = 3;
  CHECK(ReadWholeBulk("$3\r\nabc\r\n", small_bulk, &element));
  CHECK_FALSE(ReadWholeBulk("$4\r\nabcd\r\n", small_bulk, &element));
  CHECK(ParserReads("$4\r\nabcd\r\n", small_bulk).outcome == RespParser::Outcome::kError);

  RespLimits short_lines;
  short_lines.max_line_length = 1;  // "-1" is a line of two bytes
  CHECK(ReadWholeBulk("$3\r\nabc\r\n", short_lines, &element));
  CHECK(ReadWholeBulk("_\r\n", short_lines, &element));
  CHECK_FALSE(ReadWholeBulk("$10\r\n0123456789\r\n", short_lines, &element));
  CHECK_FALSE(ReadWholeBulk("$-1\r\n", short_lines, &element));
  CHECK(ParserReads("$-1\r\n", short_lines).outcome == RespParser::Outcome::kError);

  RespLimits no_nodes;
  no_nodes.max_nodes = 0;
  CHECK_FALSE(ReadWholeBulk("$1\r\nx\r\n", no_nodes, &element));
  CHECK_FALSE(ReadWholeBulk("_\r\n", no_nodes, &element));
  CHECK(ParserReads("$1\r\nx\r\n", no_nodes).outcome == RespParser::Outcome::kError);
}

// Every one-byte change and every cut of a few elements, under several limits:
// the fast reader may decline anything, but what it takes the parser takes the
// same way. Bounded: a fixed corpus of short strings.
TEST_CASE("the fast reader never reads an element differently from the parser", "[resp][mget]") {
  std::vector<RespLimits> limit_sets(4);
  limit_sets[1].max_bulk_length = 5;
  limit_sets[2].max_line_length = 1;
  limit_sets[3].max_nodes = 0;
  const std::string seeds[] = {Bulk("hello"),     Bulk(""), Bulk("ab\r\ncd"),
                               "$-1\r\n",         "_\r\n",  Bulk(std::string(120, 'x')),
                               "$05\r\nhello\r\n"};
  const char replacements[] = {'$', '-', '_', '0', '1', '5', '9', '\r', '\n', 'x', '\0'};
  std::size_t taken = 0;
  for (const RespLimits& limits : limit_sets) {
    for (const std::string& seed : seeds) {
      for (std::size_t cut = 0; cut <= seed.size(); ++cut) {
        taken += AgreesWithParser(std::string_view(seed).substr(0, cut), limits);
      }
      for (std::size_t at = 0; at < seed.size(); ++at) {
        for (char c : replacements) {
          std::string mutated = seed;
          mutated[at] = c;
          taken += AgreesWithParser(mutated, limits);
        }
      }
    }
  }
  CHECK(taken > 100);  // the comparison did run on accepted elements
}
