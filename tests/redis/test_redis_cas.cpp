// Compare-and-swap on Redis: the cas command's bytes and reply table without a
// server, then against a real redis-server: values set by another client, stale
// tokens, missing keys, TTLs, a flushed script cache, pipelined batches, values
// in cachet's envelope, the ABA property, and clients racing on one token.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "cachet/envelope.h"
#include "cachet/net/read_buffer.h"
#include "cas_token.h"
#include "lua_scripts.h"
#include "redis_backend.h"
#include "redis_batch.h"
#include "redis_commands.h"
#include "redis_replies.h"
#include "resp_encoder.h"
#include "resp_parser.h"
#include "launchers/redis_server.h"

using cachet::Item;
using cachet::ItemView;
using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::StoreMode;
using cachet::Ttl;
using cachet::WriteOptions;
using cachet::redis::CasTokenOf;
using cachet::redis::CasTokenText;
using cachet::redis::RedisBackend;
using cachet::redis::RedisOptions;

using cachet::test::RedisCli;

namespace {

Status MapCasReply(std::string_view bytes) {
  cachet::redis::RespParser parser;
  REQUIRE(parser.Parse(bytes) == cachet::redis::RespParser::Outcome::kReply);
  return cachet::redis::ReadCasOutcome(parser.reply().root(), "127.0.0.1:1");
}

std::string Bulk(std::string_view bytes) {
  return "$" + std::to_string(bytes.size()) + "\r\n" + std::string(bytes) + "\r\n";
}

Operation CasOp(std::string_view key, std::string_view value, std::uint64_t token) {
  Operation op;
  op.kind = OpKind::kStore;
  op.mode = StoreMode::kCas;
  op.key = key;
  op.item = ItemView(value, 0, token);
  return op;
}

std::unique_ptr<RedisBackend> Connect(const cachet::test::ServerProcess& server, int resp = 2) {
  RedisOptions options;
  auto parsed = cachet::net::ParseServerAddress(server.address(), 6379);
  REQUIRE(parsed.ok());
  options.servers.push_back(*parsed);
  options.session.resp = resp;
  return std::make_unique<RedisBackend>(std::move(options));
}

Status Cas(RedisBackend& backend, std::string_view key, std::string_view value, std::uint64_t token,
           Ttl ttl = Ttl{0}) {
  WriteOptions options;
  options.ttl = ttl;
  return backend.Store(StoreMode::kCas, key, ItemView(value, 0, token), options);
}

}  // namespace

// ---- without a server ------------------------------------------------------

TEST_CASE("cas is the cas script by SHA, with the token as 16 hex digits", "[redis][cas]") {
  std::string out;
  cachet::redis::AppendCas(&out, "k", "new", 0xa9993e364706816aULL, Ttl{0}, false);
  const std::string sha(cachet::redis::kCasScript.sha1);
  CHECK(out == "*7\r\n$7\r\nEVALSHA\r\n" + Bulk(sha) + "$1\r\n1\r\n$1\r\nk\r\n" +
                   Bulk("a9993e364706816a") + "$3\r\nnew\r\n$1\r\n0\r\n");

  out.clear();
  cachet::redis::AppendCas(&out, "k", "new", 1, Ttl{1500}, true);
  CHECK(out == "*7\r\n$4\r\nEVAL\r\n" + Bulk(cachet::redis::kCasScript.source) +
                   "$1\r\n1\r\n$1\r\nk\r\n" + Bulk("0000000000000001") + "$3\r\nnew\r\n" +
                   Bulk("1500"));

  // A TTL past what Redis can add its clock to is sent as none, as SET does.
  out.clear();
  cachet::redis::AppendCas(&out, "k", "", 1, Ttl::max(), false);
  CHECK(out.ends_with("$0\r\n\r\n$1\r\n0\r\n"));
}

TEST_CASE("the cas script's replies map to ok, exists and not_found", "[redis][cas]") {
  CHECK(MapCasReply(":1\r\n").ok());
  CHECK(MapCasReply(":0\r\n").IsExists());
  CHECK(MapCasReply("$-1\r\n").IsNotFound());  // Lua false in RESP2
  CHECK(MapCasReply("_\r\n").IsNotFound());    // and in RESP3
  CHECK(MapCasReply("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
            .IsError());
  CHECK(MapCasReply("+OK\r\n").IsProtocolError());
}

TEST_CASE("after a reply too large to read, a batch's operations left unanswered are io_error",
          "[redis][batch]") {
  // Not too_large: they were not refused for their size (a set refused so has
  // its key removed), and the server may have applied them.
  cachet::redis::RespLimits limits;
  limits.max_bulk_length = 8;
  cachet::redis::RedisBatch batch("127.0.0.1:1", limits, cachet::redis::CounterMode::kNative);
  std::vector<Operation> ops(3);
  ops[0].key = "big";
  ops[1].kind = cachet::OpKind::kStore;
  ops[1].key = "b";
  ops[1].item = ItemView("v");
  ops[2].key = "c";
  for (Operation& op : ops) batch.Add(op);
  const std::string replies = "$9\r\n123456789\r\n";
  cachet::net::ReadBuffer buffer;
  std::memcpy(buffer.PrepareWrite(replies.size()), replies.data(), replies.size());
  buffer.Commit(replies.size());
  const cachet::Status s = batch.Consume(buffer);
  REQUIRE(s.IsTooLarge());
  batch.Settle(s);
  CHECK(ops[0].status.IsTooLarge());
  INFO(ops[1].status.ToString());
  CHECK(ops[1].status.IsIoError());
  CHECK(ops[1].status.message().find("may have been applied") != std::string_view::npos);
  // A read left unanswered too: the value too large was another key's.
  CHECK(ops[2].status.IsIoError());
  CHECK(ops[2].status.message().find("not answered") != std::string_view::npos);
}

TEST_CASE("a batch sends cas with the other commands and maps each reply", "[redis][cas]") {
  cachet::redis::RedisBatch batch("127.0.0.1:1", {}, cachet::redis::CounterMode::kNative);
  std::vector<Operation> ops = {CasOp("a", "1", 7), CasOp("b", "2", 8), CasOp("c", "3", 9),
                                CasOp("d", "4", 10)};
  Operation get;
  get.key = "e";
  ops.push_back(get);
  for (Operation& op : ops) batch.Add(op);

  // The script is loaded once, ahead of its first call, in the same request.
  std::string expected;
  cachet::redis::AppendCommand(&expected, {"SCRIPT", "LOAD", cachet::redis::kCasScript.source});
  cachet::redis::AppendCas(&expected, "a", "1", 7, Ttl{0}, false);
  cachet::redis::AppendCas(&expected, "b", "2", 8, Ttl{0}, false);
  cachet::redis::AppendCas(&expected, "c", "3", 9, Ttl{0}, false);
  cachet::redis::AppendCas(&expected, "d", "4", 10, Ttl{0}, false);
  cachet::redis::AppendGet(&expected, "e");
  CHECK(batch.request() == expected);  // one request: one round trip

  const std::string replies = Bulk(cachet::redis::kCasScript.sha1) +
                              ":1\r\n:0\r\n$-1\r\n-NOSCRIPT No matching script. Please use "
                              "EVAL.\r\n$1\r\nv\r\n";
  cachet::net::ReadBuffer buffer;
  std::memcpy(buffer.PrepareWrite(replies.size()), replies.data(), replies.size());
  buffer.Commit(replies.size());
  REQUIRE(batch.Consume(buffer).ok());
  CHECK(batch.done());
  CHECK(ops[0].status.ok());
  CHECK(ops[1].status.IsExists());
  CHECK(ops[2].status.IsNotFound());
  // NOSCRIPT all the same (a SCRIPT FLUSH in between): listed for the caller,
  // who repeats it with the script in full.
  REQUIRE(batch.needs_script().size() == 1);
  CHECK(batch.needs_script()[0] == &ops[3]);
  CHECK(ops[4].status.ok());
  CHECK(ops[4].result.value == "v");
}

// ---- against redis-server ---------------------------------------------------

TEST_CASE("a value set by redis-cli has a token and can be swapped", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  REQUIRE(RedisCli(**server, "SET from-cli 'hello world'") == "OK");

  Item item;
  REQUIRE(backend->Gets("from-cli", &item).ok());
  CHECK(item.value == "hello world");
  CHECK(item.cas == CasTokenOf("hello world"));
  // The script's own hash agrees with the client's.
  CHECK(RedisCli(**server,
                 "EVAL \"return string.sub(redis.sha1hex(redis.call('GET', "
                 "KEYS[1])), 1, 16)\" 1 from-cli") == CasTokenText(item.cas).view());

  REQUIRE(Cas(*backend, "from-cli", "swapped", item.cas).ok());
  CHECK(RedisCli(**server, "GET from-cli") == "swapped");  // still a raw string
  CHECK(Cas(*backend, "from-cli", "again", item.cas).IsExists());
  CHECK(RedisCli(**server, "GET from-cli") == "swapped");

  // Someone else's write makes the token stale.
  REQUIRE(backend->Gets("from-cli", &item).ok());
  REQUIRE(RedisCli(**server, "SET from-cli other") == "OK");
  CHECK(Cas(*backend, "from-cli", "mine", item.cas).IsExists());
  CHECK(RedisCli(**server, "GET from-cli") == "other");

  // A gone key is not_found, and cas does not create it.
  REQUIRE(RedisCli(**server, "DEL from-cli") == "1");
  CHECK(Cas(*backend, "from-cli", "mine", item.cas).IsNotFound());
  CHECK(RedisCli(**server, "EXISTS from-cli") == "0");
  // Token 0 ("none") never matches.
  REQUIRE(backend->Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  CHECK(Cas(*backend, "k", "w", 0).IsExists());
  // Plain reads do not compute the token.
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.cas == 0);
}

TEST_CASE("cas sets the TTL it is given, as set does", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server, 3);
  WriteOptions with_ttl;
  with_ttl.ttl = Ttl{60000};
  REQUIRE(backend->Store(StoreMode::kSet, "t", ItemView("v"), with_ttl).ok());
  Item item;
  REQUIRE(backend->Gets("t", &item).ok());
  REQUIRE(Cas(*backend, "t", "w", item.cas, Ttl{30000}).ok());
  const long long pttl = std::stoll(RedisCli(**server, "PTTL t"));
  CHECK(pttl > 20000);
  CHECK(pttl <= 30000);
  REQUIRE(backend->Gets("t", &item).ok());
  REQUIRE(Cas(*backend, "t", "x", item.cas, Ttl{0}).ok());
  CHECK(RedisCli(**server, "PTTL t") == "-1");
}

TEST_CASE("binary values and empty values swap byte for byte", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  const std::string binary("a\0b\r\nc\xff", 7);
  REQUIRE(backend->Store(StoreMode::kSet, "bin", ItemView(binary), {}).ok());
  Item item;
  REQUIRE(backend->Gets("bin", &item).ok());
  REQUIRE(Cas(*backend, "bin", "", item.cas).ok());
  REQUIRE(backend->Gets("bin", &item).ok());
  CHECK(item.value.empty());
  CHECK(item.cas == CasTokenOf(""));
  REQUIRE(Cas(*backend, "bin", binary, item.cas).ok());
  REQUIRE(backend->Get("bin", &item).ok());
  CHECK(item.value == binary);
}

TEST_CASE("a flushed script cache: a single cas sends it by EVAL, a batch loads it first",
          "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  REQUIRE(backend->Store(StoreMode::kSet, "s", ItemView("1"), {}).ok());
  REQUIRE(RedisCli(**server, "SCRIPT FLUSH") == "OK");
  REQUIRE(Cas(*backend, "s", "2", CasTokenOf("1")).ok());
  CHECK(RedisCli(**server, "SCRIPT EXISTS " + std::string(cachet::redis::kCasScript.sha1)) == "1");

  REQUIRE(RedisCli(**server, "SCRIPT FLUSH") == "OK");
  REQUIRE(RedisCli(**server, "CONFIG RESETSTAT") == "OK");
  Operation read;
  read.key = "s";
  std::vector<Operation> ops = {CasOp("s", "3", CasTokenOf("2")), CasOp("s", "4", 12345), read};
  backend->Execute(ops);
  CHECK(ops[0].status.ok());
  CHECK(ops[1].status.IsExists());
  REQUIRE(ops[2].status.ok());
  CHECK(ops[2].result.value == "3");  // in batch order: the read saw the swap
  // No call answered NOSCRIPT, so none was repeated with EVAL.
  const std::string stats = RedisCli(**server, "INFO commandstats");
  CHECK(stats.find("cmdstat_evalsha:calls=2,") != std::string::npos);
  CHECK(stats.find("cmdstat_eval:") == std::string::npos);
}

TEST_CASE("a pipelined batch mixes cas with reads and writes", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  constexpr int kKeys = 300;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back("b" + std::to_string(i));
  for (const std::string& key : keys) {
    REQUIRE(backend->Store(StoreMode::kSet, key, ItemView("old-" + key), {}).ok());
  }
  std::vector<std::string> values;
  for (const std::string& key : keys) values.push_back("new-" + key);
  // Even keys with their current token, odd keys with a stale one, then a
  // missing key and a read of a swapped key (which runs after its cas).
  std::vector<Operation> ops;
  for (int i = 0; i < kKeys; ++i) {
    const std::uint64_t token = i % 2 == 0 ? CasTokenOf("old-" + keys[i]) : CasTokenOf("stale");
    ops.push_back(CasOp(keys[i], values[i], token));
  }
  ops.push_back(CasOp("never-set", "x", CasTokenOf("x")));
  Operation read;
  read.key = keys[0];
  ops.push_back(read);
  backend->Execute(ops);
  for (int i = 0; i < kKeys; ++i) {
    CAPTURE(i);
    if (i % 2 == 0) {
      REQUIRE(ops[i].status.ok());
    } else {
      REQUIRE(ops[i].status.IsExists());
    }
  }
  CHECK(ops[kKeys].status.IsNotFound());
  REQUIRE(ops[kKeys + 1].status.ok());
  CHECK(ops[kKeys + 1].result.value == values[0]);
  CHECK(RedisCli(**server, "GET b1") == "old-b1");
  CHECK(RedisCli(**server, "GET b2") == "new-b2");
}

TEST_CASE("identical bytes keep their token (the documented ABA property)",
          "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  REQUIRE(backend->Store(StoreMode::kSet, "aba", ItemView("A"), {}).ok());
  Item seen;
  REQUIRE(backend->Gets("aba", &seen).ok());
  REQUIRE(backend->Store(StoreMode::kSet, "aba", ItemView("B"), {}).ok());
  REQUIRE(backend->Store(StoreMode::kSet, "aba", ItemView("A"), {}).ok());
  // Back to the bytes that were read: the swap succeeds, unlike memcached's.
  CHECK(Cas(*backend, "aba", "C", seen.cas).ok());
}

TEST_CASE("typed values in cachet's envelope swap through the Cache", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto config = cachet::Config::Parse(
      "[cache]\nbackend = redis\n[redis]\nservers = " + (*server)->address() + "\n", "cas test");
  REQUIRE(config.ok());
  auto opened = cachet::Cache::Open(std::move(config).value());
  REQUIRE(opened.ok());
  cachet::Cache& cache = **opened;
  REQUIRE(cache.backend().capabilities().has(cachet::Capability::kCas));

  REQUIRE(cache.Set("d", 2.5).ok());
  Item raw;
  REQUIRE(Connect(**server)->Get("d", &raw).ok());
  REQUIRE(cachet::HasEnvelope(raw.value));  // flags live in the value
  auto seen = cache.Gets<double>("d");
  REQUIRE(seen.hit());
  CHECK(seen.value().value == 2.5);
  CHECK(seen.value().cas == CasTokenOf(raw.value));
  REQUIRE(cache.Cas("d", 3.5, seen.value().cas).ok());
  CHECK(cache.Get<double>("d").value_or(0) == 3.5);
  CHECK(cache.Cas("d", 4.5, seen.value().cas).IsExists());
  CHECK(cache.Get<double>("d").value_or(0) == 3.5);
}

TEST_CASE("two clients racing with the same token: exactly one wins", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto first = Connect(**server);
  auto second = Connect(**server, 3);
  constexpr int kRounds = 40;
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    const std::string start = "start-" + std::to_string(round);
    REQUIRE(first->Store(StoreMode::kSet, "race", ItemView(start), {}).ok());
    Item seen;
    REQUIRE(second->Gets("race", &seen).ok());
    Status outcomes[2];
    std::latch go(2);
    auto racer = [&](int who, RedisBackend& backend) {
      go.arrive_and_wait();
      outcomes[who] = Cas(backend, "race", "winner-" + std::to_string(who), seen.cas);
    };
    std::thread a(racer, 0, std::ref(*first));
    std::thread b(racer, 1, std::ref(*second));
    a.join();
    b.join();
    REQUIRE(outcomes[0].ok() != outcomes[1].ok());
    const int winner = outcomes[0].ok() ? 0 : 1;
    CHECK(outcomes[1 - winner].IsExists());
    CHECK(RedisCli(**server, "GET race") == "winner-" + std::to_string(winner));
  }
}

TEST_CASE("threads counting by read-and-swap lose no update", "[redis][cas][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  REQUIRE(backend->Store(StoreMode::kSet, "count", ItemView("0"), {}).ok());
  constexpr int kThreads = 4;
  constexpr int kIncrements = 50;
  constexpr int kMaxAttempts = 10000;  // per increment; bounded, never reached in practice
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIncrements; ++i) {
        bool done = false;
        for (int attempt = 0; attempt < kMaxAttempts && !done; ++attempt) {
          Item item;
          if (!backend->Gets("count", &item).ok()) break;
          const std::string next = std::to_string(std::stoi(item.value) + 1);
          done = Cas(*backend, "count", next, item.cas).ok();
        }
        if (!done) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int failed : failures) CHECK(failed == 0);
  CHECK(RedisCli(**server, "GET count") == std::to_string(kThreads * kIncrements));
}

namespace {

const std::string kPush = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ne\r\n";

// A batch of one GET of "e" fed `bytes` at once; what Consume() said.
struct FedGet {
  FedGet(const cachet::redis::RespLimits& limits, std::string_view bytes)
      : batch("127.0.0.1:1", limits, cachet::redis::CounterMode::kNative) {
    get.kind = cachet::OpKind::kGet;
    get.key = "e";
    batch.Add(get);
    char* at = buffer.PrepareWrite(bytes.size());
    std::memcpy(at, bytes.data(), bytes.size());
    buffer.Commit(bytes.size());
    consumed = batch.Consume(buffer);
  }
  Operation get;
  cachet::redis::RedisBatch batch;
  cachet::net::ReadBuffer buffer;
  cachet::Status consumed;
};

}  // namespace

TEST_CASE("a whole push right after a redis batch's last reply is no leftover", "[redis][push]") {
  cachet::redis::RespLimits resp3;
  resp3.resp3 = true;
  FedGet fed(resp3, "$1\r\nv\r\n" + kPush);
  REQUIRE(fed.consumed.ok());
  CHECK(fed.batch.done());
  CHECK(fed.buffer.empty());
  CHECK(fed.get.status.ok());
  CHECK(fed.get.result.value == "v");
}

TEST_CASE("a push in a redis batch on a RESP2 connection fails the exchange", "[redis][push]") {
  FedGet fed({}, kPush + "$1\r\nv\r\n");
  CHECK(fed.consumed.IsProtocolError());
  CHECK(fed.consumed.message().find("RESP2") != std::string_view::npos);
  CHECK_FALSE(fed.batch.done());
}
