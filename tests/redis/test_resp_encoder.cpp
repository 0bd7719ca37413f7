// RESP command encoding: exact bytes, binary safety, and a round trip through the parser.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "redis_commands.h"
#include "resp_encoder.h"
#include "resp_parser.h"

using cachet::redis::AppendCommand;
using cachet::redis::RespCommand;
using cachet::redis::RespParser;
using namespace std::string_view_literals;
using cachet::Ttl;

TEST_CASE("a command is an array of bulk strings", "[resp]") {
  std::string out;
  AppendCommand(&out, {"SET", "key", "value"});
  CHECK(out == "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n");
}

TEST_CASE("commands append to the same buffer for a pipeline", "[resp]") {
  std::string out;
  AppendCommand(&out, {"GET", "a"});
  AppendCommand(&out, {"PING"});
  CHECK(out == "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n");
}

TEST_CASE("arguments are binary safe", "[resp]") {
  std::string out;
  std::string_view nasty = "a\r\nFLUSHALL\r\n\0b"sv;
  AppendCommand(&out, {"SET", nasty, ""});
  std::string expected = "*3\r\n$3\r\nSET\r\n$15\r\n";
  expected.append(nasty);
  expected += "\r\n$0\r\n\r\n";
  CHECK(out == expected);
}

TEST_CASE("numbers are written as decimal text", "[resp]") {
  std::string out;
  RespCommand command(&out, 3);
  command.Arg("INCRBY").Arg(std::int64_t{-9223372036854775807 - 1}).Arg(std::uint64_t{42});
  CHECK(command.written() == 3);
  CHECK(out == "*3\r\n$6\r\nINCRBY\r\n$20\r\n-9223372036854775808\r\n$2\r\n42\r\n");
}

TEST_CASE("an encoded command parses back to its arguments", "[resp]") {
  std::vector<std::string> args = {"MSET", "k1", std::string(1000, 'x'), "k2", ""};
  std::string out;
  AppendCommand(&out, args);
  RespParser parser;
  REQUIRE(parser.Parse(out) == RespParser::Outcome::kReply);
  CHECK(parser.consumed() == out.size());
  auto root = parser.reply().root();
  REQUIRE(root.size() == args.size());
  std::size_t i = 0;
  for (auto value : root) CHECK(value.text() == args[i++]);
}

TEST_CASE("arguments written into a buffer sized up front are RESP bulk strings", "[resp]") {
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 130; ++n) lengths.push_back(n);
  for (std::size_t n : {999, 1000, 1001, 9999, 10000, 123456}) lengths.push_back(n);
  for (std::size_t length : lengths) {
    INFO("length " << length);
    std::string bytes(length, 'b');
    for (std::size_t i = 0; i < length; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    // Built by hand, not by an encoder: the writers must produce RESP itself.
    const std::string expected = "$" + std::to_string(length) + "\r\n" + bytes + "\r\n";
    std::string written(cachet::redis::BulkArgSize(length) + 8, '#');
    char* end = cachet::redis::WriteBulkArg(written.data(), bytes);
    CHECK(static_cast<std::size_t>(end - written.data()) == cachet::redis::BulkArgSize(length));
    CHECK(std::string_view(written.data(), expected.size()) == expected);
    CHECK(written.substr(expected.size()) == std::string(8, '#'));  // nothing past the end
  }
}

TEST_CASE("array headers written in place have their stated size", "[resp]") {
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{9}, std::size_t{10},
                            std::size_t{99}, std::size_t{100}, std::size_t{101}, std::size_t{999},
                            std::size_t{1000}, std::size_t{1000000}, std::size_t{9999999999},
                            std::size_t{10000000000000000000u}, SIZE_MAX}) {
    INFO("count " << count);
    const std::string expected = "*" + std::to_string(count) + "\r\n";
    char header[32];
    char* end = cachet::redis::WriteArrayHeader(header, count);
    CHECK(std::string_view(header, static_cast<std::size_t>(end - header)) == expected);
    CHECK(cachet::redis::ArrayHeaderSize(count) == expected.size());
  }
}

TEST_CASE("a TTL Redis cannot add its clock to is sent as no expiry", "[resp][ttl]") {
  using cachet::StoreMode;
  using cachet::redis::kLongestTtlMs;
  const Ttl longest{kLongestTtlMs};
  std::string out;
  cachet::redis::AppendSet(&out, StoreMode::kSet, "k", "v", longest);
  CHECK(out == "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nPX\r\n$19\r\n" +
                   std::to_string(kLongestTtlMs) + "\r\n");
  for (const Ttl ttl : {longest + Ttl{1}, Ttl::max()}) {
    out.clear();
    cachet::redis::AppendSet(&out, StoreMode::kAdd, "k", "v", ttl);
    CHECK(out == "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n");
    out.clear();
    cachet::redis::AppendTouch(&out, "k", ttl);
    CHECK(out == "*3\r\n$5\r\nGETEX\r\n$1\r\nk\r\n$7\r\nPERSIST\r\n");
    out.clear();
    cachet::redis::AppendGetAndTouch(&out, "k", ttl);
    CHECK(out == "*3\r\n$5\r\nGETEX\r\n$1\r\nk\r\n$7\r\nPERSIST\r\n");
  }
}

TEST_CASE("a native counter step of 1 is INCR / DECR, any other step INCRBY / DECRBY", "[resp]") {
  using cachet::redis::AppendCounter;
  using cachet::redis::CounterMode;
  std::string out;
  AppendCounter(&out, CounterMode::kNative, true, "k", 1, false);
  CHECK(out == "*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n");
  out.clear();
  AppendCounter(&out, CounterMode::kNative, false, "k", 1, false);
  CHECK(out == "*2\r\n$4\r\nDECR\r\n$1\r\nk\r\n");
  out.clear();
  AppendCounter(&out, CounterMode::kNative, true, "k", 5, false);
  CHECK(out == "*3\r\n$6\r\nINCRBY\r\n$1\r\nk\r\n$1\r\n5\r\n");
  out.clear();
  AppendCounter(&out, CounterMode::kNative, false, "k", 0, false);
  CHECK(out == "*3\r\n$6\r\nDECRBY\r\n$1\r\nk\r\n$1\r\n0\r\n");
  out.clear();
  // The memcached-style script keeps its own arguments, a step of 1 included.
  AppendCounter(&out, CounterMode::kMemcached, true, "k", 1, false);
  CHECK(out.starts_with("*6\r\n$7\r\nEVALSHA\r\n"));
}
