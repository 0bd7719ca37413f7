// RedisBackend against a real redis-server on a loopback port: every operation,
// RESP2 and RESP3, a wrong password, and raw values shared with redis-cli.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lua_scripts.h"
#include "redis_backend.h"
#include "launchers/redis_server.h"

using cachet::Item;
using cachet::ItemView;
using cachet::StoreMode;
using cachet::Ttl;
using cachet::WriteOptions;
using cachet::redis::RedisBackend;
using cachet::redis::RedisOptions;

using cachet::test::RedisCli;

namespace {

std::unique_ptr<RedisBackend> Connect(const cachet::test::ServerProcess& server, int resp = 2,
                                      std::string password = "") {
  RedisOptions options;
  auto parsed = cachet::net::ParseServerAddress(server.address(), 6379);
  REQUIRE(parsed.ok());
  options.servers.push_back(*parsed);
  options.session.resp = resp;
  options.session.password = std::move(password);
  // The memcached-style script, which these tests check to the last bit; the
  // native INCRBY default has a test of its own below.
  options.counters = cachet::redis::CounterMode::kMemcached;
  return std::make_unique<RedisBackend>(std::move(options));
}

}  // namespace

TEST_CASE("every operation maps onto Redis, in RESP2 and RESP3", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  for (int resp : {2, 3}) {
    CAPTURE(resp);
    auto backend = Connect(**server, resp);
    REQUIRE(backend->Flush().ok());
    Item item;
    CHECK(backend->Get("k", &item).IsNotFound());
    REQUIRE(backend->Store(StoreMode::kSet, "k", ItemView("v1"), {}).ok());
    REQUIRE(backend->Get("k", &item).ok());
    CHECK(item.value == "v1");
    CHECK(backend->Store(StoreMode::kAdd, "k", ItemView("x"), {}).IsNotStored());
    CHECK(backend->Store(StoreMode::kReplace, "missing", ItemView("x"), {}).IsNotStored());
    CHECK(backend->Store(StoreMode::kReplace, "k", ItemView("v2"), {}).ok());
    CHECK(backend->Store(StoreMode::kAppend, "k", ItemView(">"), {}).ok());
    CHECK(backend->Store(StoreMode::kPrepend, "k", ItemView("<"), {}).ok());
    CHECK(backend->Store(StoreMode::kAppend, "missing", ItemView("x"), {}).IsNotStored());
    CHECK(backend->Store(StoreMode::kPrepend, "missing", ItemView("x"), {}).IsNotStored());
    REQUIRE(backend->Get("k", &item).ok());
    CHECK(item.value == "<v2>");
    // Cas by the value's token (test_redis_cas covers it in depth); token 0 never matches.
    CHECK(backend->Store(StoreMode::kCas, "k", ItemView("x"), {}).IsExists());
    REQUIRE(backend->Gets("k", &item).ok());
    CHECK(backend->Store(StoreMode::kCas, "k", ItemView(item.value, 0, item.cas), {}).ok());
    CHECK(backend->Store(StoreMode::kCas, "gone", ItemView("x", 0, item.cas), {}).IsNotFound());

    std::uint64_t counter = 0;
    REQUIRE(backend->Store(StoreMode::kSet, "n", ItemView("10"), {}).ok());
    REQUIRE(backend->Incr("n", 5, &counter).ok());
    CHECK(counter == 15);
    REQUIRE(backend->Decr("n", 20, &counter).ok());
    CHECK(counter == 0);
    CHECK(backend->Incr("k", 1, &counter).IsInvalidArgument());
    CHECK(backend->Incr("no-counter", 1, &counter).IsNotFound());
    // Past 2^53, where Lua's doubles stop being exact, and across the wrap.
    REQUIRE(backend->Store(StoreMode::kSet, "n", ItemView("18446744073709551000"), {}).ok());
    REQUIRE(backend->Incr("n", 615, &counter).ok());
    CHECK(counter == 18446744073709551615u);
    REQUIRE(backend->Incr("n", 9999999999, &counter).ok());
    CHECK(counter == 9999999998u);
    REQUIRE(backend->Decr("n", 9999999997, &counter).ok());
    CHECK(counter == 1);
    CHECK(RedisCli(**server, "GET n") == "1");

    WriteOptions with_ttl;
    with_ttl.ttl = Ttl(60000);
    REQUIRE(backend->Store(StoreMode::kSet, "t", ItemView("v"), with_ttl).ok());
    std::string pttl = RedisCli(**server, "PTTL t");
    CHECK(std::stoll(pttl) > 50000);
    CHECK(backend->Touch("t", Ttl(0)).ok());
    CHECK(RedisCli(**server, "PTTL t") == "-1");
    CHECK(backend->Touch("t", Ttl(30000)).ok());
    CHECK(std::stoll(RedisCli(**server, "PTTL t")) > 20000);
    CHECK(backend->Touch("missing", Ttl(1000)).IsNotFound());
    REQUIRE(backend->GetAndTouch("t", Ttl(0), &item).ok());
    CHECK(item.value == "v");
    CHECK(RedisCli(**server, "PTTL t") == "-1");
    CHECK(backend->GetAndTouch("missing", Ttl(0), &item).IsNotFound());

    CHECK(backend->Remove("k").ok());
    CHECK(backend->Remove("k").IsNotFound());
    cachet::StatsMap stats;
    REQUIRE(backend->Stats(&stats).ok());
    bool has_version = false;
    for (auto& [name, value] : stats) has_version |= name == "redis_version";
    CHECK(has_version);
  }
}

TEST_CASE("the script hashes are the SHA-1 of their source", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  for (const auto* script : {&cachet::redis::kAppendScript, &cachet::redis::kPrependScript,
                             &cachet::redis::kCasScript, &cachet::redis::kCounterScript}) {
    std::string sha = RedisCli(**server, "SCRIPT LOAD \"" + std::string(script->source) + "\"");
    CHECK(sha == script->sha1);
  }
}

TEST_CASE("raw values are shared byte for byte with redis-cli", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  REQUIRE(RedisCli(**server, "SET from-cli 'hello world'") == "OK");
  Item item;
  REQUIRE(backend->Get("from-cli", &item).ok());
  CHECK(item.value == "hello world");
  REQUIRE(backend->Store(StoreMode::kSet, "from-cachet", ItemView("plain text"), {}).ok());
  CHECK(RedisCli(**server, "GET from-cachet") == "plain text");
}

TEST_CASE("a wrong password is auth_failed and never shown", "[redis][integration]") {
  auto server = cachet::test::StartRedis({"--requirepass", "right-secret"});
  REQUIRE(server.ok());
  auto wrong = Connect(**server, 2, "wrong-secret-123");
  Item item;
  cachet::Status s = wrong->Get("k", &item);
  CHECK(s.IsAuthFailed());
  CHECK(s.ToString().find("wrong-secret-123") == std::string::npos);
  auto none = Connect(**server, 3);
  CHECK(none->Get("k", &item).IsAuthFailed());
  auto right = Connect(**server, 3, "right-secret");
  CHECK(right->Get("k", &item).IsNotFound());
}

TEST_CASE("a password sent to a server without one is auth_failed", "[redis][integration]") {
  // Over RESP2 (AUTH password): Redis refuses it. (HELLO 3 AUTH names the default
  // user, which a server without a password lets in whatever the password.)
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server, 2, "unneeded-secret-456");
  Item item;
  cachet::Status s = backend->Get("k", &item);
  INFO(s.ToString());
  CHECK(s.IsAuthFailed());
  CHECK(s.ToString().find("unneeded-secret-456") == std::string::npos);
}

// A login of two commands and a batch of two replies each end with PING (a
// reply sent twice is then seen); a user whose ACL denies PING still logs in
// and runs batches, the refusal standing for the PONG.
TEST_CASE("an ACL user without ping logs in and runs batches", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  REQUIRE(RedisCli(**server, "acl setuser app on '>app-secret' '~*' '+@all' '-ping'") == "OK");
  REQUIRE(RedisCli(**server, "--user app --pass app-secret --no-auth-warning ping")
              .find("NOPERM") != std::string::npos);
  RedisOptions options;
  auto parsed = cachet::net::ParseServerAddress((*server)->address(), 6379);
  REQUIRE(parsed.ok());
  options.servers.push_back(*parsed);
  options.session.username = "app";
  options.session.password = "app-secret";
  options.session.db = 1;  // AUTH, SELECT and PING
  RedisBackend backend(std::move(options));
  std::vector<cachet::Operation> batch(2);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i].kind = cachet::OpKind::kStore;
    batch[i].mode = StoreMode::kAdd;
    batch[i].key = i == 0 ? "a" : "b";
    batch[i].item = ItemView("v");
  }
  backend.Execute(batch);
  for (const cachet::Operation& op : batch) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.ok());
  }
  backend.Execute(batch);
  for (const cachet::Operation& op : batch) CHECK(op.status.IsNotStored());
  CHECK(RedisCli(**server, "-n 1 get a") == "v");
}

// After a failed save (stop-writes-on-bgsave-error) Redis refuses writes and
// PING with MISCONF and still serves reads: a batch keeps its answers, a new
// connection logs in, and the server is not held to have failed.
TEST_CASE("a server refusing writes and PING after a failed save still serves batches",
          "[redis][integration]") {
  // Its directory goes away under it, so the save it is asked for fails.
  const std::filesystem::path gone = std::filesystem::temp_directory_path() /
                                     ("cachet-misconf-" + std::to_string(::getpid()));
  std::filesystem::create_directories(gone);
  // Redis stops writes only where it has save points.
  auto server = cachet::test::StartRedis({"--dir", gone.string(), "--save", "3600 1"});
  REQUIRE(server.ok());
  REQUIRE(RedisCli(**server, "set a v") == "OK");
  std::filesystem::remove_all(gone);
  RedisCli(**server, "bgsave");
  for (int i = 0; i < 100 && RedisCli(**server, "ping").find("MISCONF") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(RedisCli(**server, "ping").find("MISCONF") != std::string::npos);
  RedisOptions options;
  auto parsed = cachet::net::ParseServerAddress((*server)->address(), 6379);
  REQUIRE(parsed.ok());
  options.servers.push_back(*parsed);
  options.session.client_name = "app";
  options.session.resp = 3;  // HELLO 3, CLIENT SETNAME and PING
  RedisBackend backend(std::move(options));
  for (int round = 0; round < 3; ++round) {
    std::vector<cachet::Operation> batch(2);
    batch[0].key = "a";
    batch[1].kind = cachet::OpKind::kIncr;
    batch[1].key = "n";
    batch[1].delta = 1;
    backend.Execute(batch);
    INFO(batch[0].status.ToString() << " / " << batch[1].status.ToString());
    REQUIRE(batch[0].status.ok());
    CHECK(batch[0].result.value == "v");
    CHECK(batch[1].status.message().find("MISCONF") != std::string_view::npos);
  }
  std::vector<cachet::ServerHealth> health;
  REQUIRE(backend.Health(&health).ok());
  CHECK(health.front().consecutive_failures == 0);
  CHECK(health.front().protocol_errors == 0);
  // Without save points it stops at once, rather than after a shutdown save that would fail.
  CHECK(RedisCli(**server, "config set save ''") == "OK");
}

TEST_CASE("a server that is down is unavailable, not a miss", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect(**server);
  REQUIRE((*server)->Stop().ok());
  Item item;
  cachet::Status s = backend->Get("k", &item);
  CHECK(s.IsError());
  REQUIRE((*server)->Restart().ok());
  // The failure count resets on the first success; allow the pool its rest.
  cachet::Status after = backend->Get("k", &item);
  CHECK((after.IsNotFound() || after.IsUnavailable()));
}

TEST_CASE("a mixed batch is pipelined over two servers with one result per operation",
          "[redis][integration]") {
  auto first = cachet::test::StartRedis();
  auto second = cachet::test::StartRedis();
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  RedisOptions options;
  for (auto* server : {first->get(), second->get()}) {
    auto parsed = cachet::net::ParseServerAddress(server->address(), 6379);
    REQUIRE(parsed.ok());
    options.servers.push_back(*parsed);
  }
  RedisBackend backend(std::move(options));
  REQUIRE(RedisCli(**first, "SCRIPT FLUSH") == "OK");

  // More than kMaxInFlight operations, so the batch goes in several rounds.
  constexpr int kKeys = 1500;
  std::vector<std::string> keys, values;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back("batch:" + std::to_string(i));
    values.push_back(std::string(static_cast<std::size_t>(i % 7) * 100, 'a' + i % 26));
  }
  std::vector<cachet::Operation> sets(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    sets[i].kind = cachet::OpKind::kStore;
    sets[i].key = keys[i];
    sets[i].item = ItemView(values[i]);
  }
  backend.Execute(sets);
  for (auto& op : sets) REQUIRE(op.status.ok());
  // Both servers got a share.
  CHECK(std::stoi(RedisCli(**first, "DBSIZE")) > kKeys / 4);
  CHECK(std::stoi(RedisCli(**second, "DBSIZE")) > kKeys / 4);

  std::vector<cachet::Operation> mixed(kKeys + 4);
  for (int i = 0; i < kKeys; ++i) {
    mixed[i].kind = cachet::OpKind::kGet;
    mixed[i].key = keys[i];
  }
  mixed[kKeys].kind = cachet::OpKind::kGet;
  mixed[kKeys].key = "batch:missing";
  mixed[kKeys + 1].kind = cachet::OpKind::kStore;
  mixed[kKeys + 1].mode = StoreMode::kAppend;
  mixed[kKeys + 1].key = keys[1];
  mixed[kKeys + 1].item = ItemView("!");
  mixed[kKeys + 2].kind = cachet::OpKind::kRemove;
  mixed[kKeys + 2].key = keys[2];
  mixed[kKeys + 3].kind = cachet::OpKind::kIncr;
  mixed[kKeys + 3].key = keys[0];  // "" is not a number
  mixed[kKeys + 3].delta = 1;
  backend.Execute(mixed);
  for (int i = 0; i < kKeys; ++i) {
    REQUIRE(mixed[i].status.ok());
    REQUIRE(mixed[i].result.value == values[i]);
  }
  CHECK(mixed[kKeys].status.IsNotFound());
  CHECK(mixed[kKeys + 1].status.ok());
  CHECK(mixed[kKeys + 2].status.ok());
  CHECK(mixed[kKeys + 3].status.IsInvalidArgument());
  Item item;
  REQUIRE(backend.Get(keys[1], &item).ok());
  CHECK(item.value == values[1] + "!");

  // A server that is down makes its share errors, never misses.
  REQUIRE((*second)->Kill().ok());
  std::vector<cachet::Operation> gets(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    gets[i].kind = cachet::OpKind::kGet;
    gets[i].key = keys[i];
  }
  backend.Execute(gets);
  int errors = 0;
  for (auto& op : gets) {
    CHECK_FALSE((op.status.IsNotFound() && op.key != keys[2]));
    errors += op.status.IsError() ? 1 : 0;
  }
  CHECK(errors > kKeys / 4);
}

TEST_CASE("counters = redis (the default) uses INCRBY's signed semantics", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  RedisOptions options;
  auto parsed = cachet::net::ParseServerAddress((*server)->address(), 6379);
  REQUIRE(parsed.ok());
  options.servers.push_back(*parsed);
  options.counters = cachet::redis::CounterMode::kNative;
  RedisBackend backend(std::move(options));
  std::uint64_t counter = 0;
  REQUIRE(backend.Incr("fresh", 5, &counter).ok());
  CHECK(counter == 5);
  REQUIRE(backend.Decr("fresh", 7, &counter).ok());
  CHECK(static_cast<std::int64_t>(counter) == -2);
  CHECK(backend.Incr("fresh", std::uint64_t{1} << 63, &counter).IsInvalidArgument());
}

TEST_CASE("two backends in one thread keep their own reply size limits", "[redis][integration]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto roomy = Connect(**server);
  RedisOptions tight_options;
  tight_options.servers.push_back(*cachet::net::ParseServerAddress((*server)->address(), 6379));
  tight_options.session.limits.max_bulk_length = 100;
  RedisBackend tight(std::move(tight_options));
  const std::string big(1000, 'b');
  REQUIRE(roomy->Store(StoreMode::kSet, "big", ItemView(big), {}).ok());
  // Each read in turn, in both orders: the parser this thread shares must apply
  // the limit of the backend that is reading.
  for (int round = 0; round < 2; ++round) {
    Item item;
    REQUIRE(roomy->Get("big", &item).ok());
    CHECK(item.value == big);
    cachet::Status refused = tight.Get("big", &item);
    INFO(refused.ToString());
    CHECK(refused.IsError());
    CHECK_FALSE(refused.IsNotFound());
  }
}

TEST_CASE("both modes offer invalidations, as the plugin declares (one rule)", "[redis]") {
  for (const auto mode : {cachet::redis::RedisMode::kStandalone,
                          cachet::redis::RedisMode::kCluster}) {
    RedisOptions options;
    options.mode = mode;
    options.servers = {{"127.0.0.1", 1, 1}};  // nothing is sent before the first use
    RedisBackend backend(std::move(options));
    CHECK(backend.capabilities().has(cachet::Capability::kInvalidations));
    CHECK(backend.capabilities().bits() == RedisBackend::kOffered.bits());
  }
}
