// A connection's stream stays in step with its requests, on every network store:
// a reply too many, bytes arriving while a connection is idle, or a reply of the
// wrong kind fail that call and close the connection, so no later call reads
// them as its own answer. Connections that the server closed while they were
// idle (redis-server --timeout, memcached -o idle_timeout, a restart) are noticed
// before use and cost no call. A reply that keeps arriving is waited for as long
// as it makes progress (io_timeout), but never past request_timeout.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cachet/near_cache.h"
#include "cachet/net/distribution.h"
#include "cachet/net/server_pool.h"
#include "memcached_backend.h"
#include "redis_backend.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_server.h"
#include "support/fake_backend.h"
#include "support/scripted_server.h"
#include "tt_backend.h"

namespace {

using cachet::Item;
using cachet::ItemView;
using cachet::Status;
using cachet::StoreMode;
using cachet::test::ScriptedServer;
using cachet::test::ScriptStep;
using std::chrono::milliseconds;

constexpr milliseconds kIoTimeout{300};

cachet::net::ServerAddress Loopback(int port) {
  return {"127.0.0.1", static_cast<std::uint16_t>(port), 1};
}

std::unique_ptr<cachet::redis::RedisBackend> RedisAt(int port, milliseconds io = kIoTimeout,
                                                     milliseconds request = milliseconds(3000)) {
  cachet::redis::RedisOptions options;
  options.servers.push_back(Loopback(port));
  options.pool.connection.io_timeout = io;
  options.pool.connection.request_timeout = request;
  // Bad replies count against the server; these tests go on with it at once.
  options.pool.retry_timeout = milliseconds(0);
  return std::make_unique<cachet::redis::RedisBackend>(std::move(options));
}

std::unique_ptr<cachet::memcached::MemcachedBackend> MemcachedAt(
    int port, milliseconds io = kIoTimeout, milliseconds request = milliseconds(3000),
    cachet::memcached::Protocol protocol = cachet::memcached::Protocol::kText) {
  cachet::memcached::MemcachedOptions options;
  options.protocol = protocol;
  options.servers.push_back(Loopback(port));
  options.pool.connection.io_timeout = io;
  options.pool.connection.request_timeout = request;
  options.pool.retry_timeout = milliseconds(0);
  return std::make_unique<cachet::memcached::MemcachedBackend>(std::move(options));
}

std::unique_ptr<cachet::tokyotyrant::TokyoTyrantBackend> TokyoTyrantAt(int port) {
  cachet::tokyotyrant::TokyoTyrantOptions options;
  options.servers.push_back(Loopback(port));
  options.pool.connection.io_timeout = kIoTimeout;
  return std::make_unique<cachet::tokyotyrant::TokyoTyrantBackend>(std::move(options));
}

// `count` operations of `kind` (at most three) on the keys "a", "b" and "c",
// writes with the value "v".
std::vector<cachet::Operation> Ops(cachet::OpKind kind, std::size_t count) {
  static constexpr std::string_view kKeys[] = {"a", "b", "c"};
  std::vector<cachet::Operation> batch(count);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i].kind = kind;
    batch[i].key = kKeys[i];
    batch[i].item = ItemView("v");
  }
  return batch;
}

std::string Bulk(const std::string& value) {
  return "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

std::string Value(const std::string& key, const std::string& value) {
  return "VALUE " + key + " 0 " + std::to_string(value.size()) + "\r\n" + value + "\r\nEND\r\n";
}

// Tokyo Tyrant's get and put, framed for the scripted server: the magic and
// command bytes, 32-bit big-endian sizes, then the bytes.
std::size_t TokyoTyrantRequest(std::string_view pending) {
  auto size_at = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(pending[at])) << 24) |
           (std::uint32_t(std::uint8_t(pending[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(pending[at + 2])) << 8) | std::uint8_t(pending[at + 3]);
  };
  if (pending.size() < 6) return 0;
  const bool put = std::uint8_t(pending[1]) == 0x10;
  const std::size_t header = put ? 10 : 6;
  if (pending.size() < header) return 0;
  const std::size_t end = header + size_at(2) + (put ? size_at(6) : 0);
  return pending.size() >= end ? end : 0;
}

// Tokyo Tyrant's commands without arguments (vanish, stat): the two bytes alone.
std::size_t TokyoTyrantBareRequest(std::string_view pending) { return pending.size() >= 2 ? 2 : 0; }

std::string TokyoTyrantValue(const std::string& value) {
  const auto n = static_cast<std::uint32_t>(value.size());
  std::string reply(1, '\0');
  for (int shift : {24, 16, 8, 0}) reply.push_back(static_cast<char>((n >> shift) & 0xff));
  return reply + value;
}

}  // namespace

// The "reply too many" cases send the extra reply in the same write as the
// expected one, so the client reads both at once (on loopback, one segment);
// were they ever split, the idle check would close the connection instead and
// the call would be ok: either way no later call reads the extra reply.
TEST_CASE("Redis: a reply too many fails its call and is never read as the next one's",
          "[stream][redis]") {
  ScriptedServer server(
      cachet::test::RespRequests(),
      {{Bulk("A") + Bulk("WRONG")}, {Bulk("B")}, {"+OK\r\n+OK\r\n"}, {Bulk("C")}});
  auto backend = RedisAt(server.port());
  Item item;
  Status extra = backend->Get("a", &item);
  INFO(extra.ToString());
  CHECK(extra.IsProtocolError());
  REQUIRE(backend->Get("b", &item).ok());
  CHECK(item.value == "B");
  CHECK(backend->Store(StoreMode::kSet, "k", ItemView("v"), {}).IsProtocolError());
  REQUIRE(backend->Get("c", &item).ok());
  CHECK(item.value == "C");
  CHECK(server.connections() == 3);
}

TEST_CASE("Redis: a status line is no value", "[stream][redis]") {
  ScriptedServer server(cachet::test::RespRequests(), {{"+OK\r\n"}, {Bulk("v")}});
  auto backend = RedisAt(server.port());
  Item item;
  Status s = backend->Get("k", &item);
  INFO(s.ToString());
  CHECK(s.IsProtocolError());
  CHECK(item.value.empty());
  // Counted against the server, as any protocol error is.
  std::vector<cachet::ServerHealth> health;
  REQUIRE(backend->Health(&health).ok());
  CHECK(health.front().protocol_errors == 1);
  CHECK(health.front().consecutive_failures == 1);
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("Redis: a login command the server refuses is named in the error", "[stream][redis]") {
  ScriptedServer server(
      cachet::test::RespRequests(),
      {{"-ERR unknown command 'CLIENT', with args beginning with: 'SETNAME' 'app' \r\n"}});
  cachet::redis::RedisOptions options;
  options.servers.push_back(Loopback(server.port()));
  options.pool.connection.io_timeout = kIoTimeout;
  options.session.client_name = "app";
  cachet::redis::RedisBackend backend(std::move(options));
  Item item;
  Status s = backend.Get("k", &item);
  INFO(s.ToString());
  CHECK(s.IsUnsupported());
  CHECK(s.message().find("in the login, by CLIENT SETNAME (client_name; empty: not sent)") !=
        std::string_view::npos);
}

// The login's commands (SELECT, CLIENT SETNAME) are a pipeline too: a reply
// sent twice there would leave SETNAME's own to answer the first call.
TEST_CASE("Redis: a login reply sent twice answers no call", "[stream][redis]") {
  ScriptedServer server(cachet::test::RespRequests(),
                        {{"+OK\r\n+OK\r\n"},
                         {"", 0, {}, "+OK\r\n", milliseconds(50)},
                         {"+PONG\r\n"},
                         {"$-1\r\n"}});
  cachet::redis::RedisOptions options;
  options.servers.push_back(Loopback(server.port()));
  options.pool.connection.io_timeout = kIoTimeout;
  options.session.db = 1;
  options.session.client_name = "app";
  cachet::redis::RedisBackend backend(std::move(options));
  const Status add = backend.Store(StoreMode::kAdd, "c", ItemView("v"), {});
  INFO(add.ToString());
  CHECK(add.IsProtocolError());
  CHECK(add.message().find("a reply too many in the login") != std::string_view::npos);
}

TEST_CASE("Redis: bytes that arrive while a connection is idle are nobody's reply",
          "[stream][redis]") {
  ScriptedServer server(cachet::test::RespRequests(),
                        {{Bulk("A"), 0, {}, Bulk("WRONG"), milliseconds(50)}, {Bulk("B")}});
  auto backend = RedisAt(server.port());
  Item item;
  REQUIRE(backend->Get("a", &item).ok());
  CHECK(item.value == "A");
  REQUIRE(server.WaitUntilStepsPlayed(1));  // its late bytes sent
  REQUIRE(backend->Get("b", &item).ok());
  CHECK(item.value == "B");
  CHECK(server.connections() == 2);
}

// The limit of a protocol that pairs replies by position: a stray reply that
// arrives just after the next request went out is read as that request's answer.
// It is found once the real answer arrives (here by the idle check of the next
// call); what the near cache kept before then is dropped, not served.
TEST_CASE("Redis near cache: an answer read before a stream fault showed is not served near",
          "[stream][redis][near]") {
  // To the client, b's request is answered by a stray reply ("WRONG") and b's
  // own answer comes later: the script sends them in that order.
  ScriptedServer server(cachet::test::RespRequests(),
                        {{Bulk("A")},
                         {Bulk("WRONG"), 0, {}, Bulk("B"), milliseconds(50)},
                         {Bulk("C")},
                         {Bulk("B")}});
  std::shared_ptr<cachet::Backend> store = RedisAt(server.port());
  cachet::test::FakeBackend::Options near_options;
  near_options.expire = true;
  cachet::NearCacheOptions options;
  options.ttl = cachet::Ttl{60000};
  options.invalidation = cachet::NearInvalidation::kTtl;
  auto near = cachet::WithNearCache(
      store, std::make_shared<cachet::test::FakeBackend>(near_options), options);
  REQUIRE(near.ok());
  cachet::Backend& cache = **near;
  Item item;
  REQUIRE(cache.Get("a", &item).ok());
  CHECK(item.value == "A");
  // The stray reply is read as b's answer (the limit).
  REQUIRE(cache.Get("b", &item).ok());
  CHECK(item.value == "WRONG");
  // b's real answer arrives while the connection is idle: the next call's idle
  // check finds it, closes the connection and counts a stream fault.
  REQUIRE(server.WaitUntilStepsPlayed(2));  // its late bytes sent
  REQUIRE(cache.Get("c", &item).ok());
  CHECK(item.value == "C");
  // So b is asked of the server again rather than served near.
  REQUIRE(cache.Get("b", &item).ok());
  CHECK(item.value == "B");
  const cachet::NearMetrics metrics = cachet::NearCacheMetrics(cache);
  CHECK(metrics.hits == 0);
  CHECK(metrics.dropped_by_stream_fault == 3);  // a, b and c
  CHECK(server.connections() == 2);
}

TEST_CASE("memcached: a reply too many, or late, is never read as the next one's",
          "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(),
                        {{Value("a", "A") + Value("a", "WRONG")},
                         {"STORED\r\nSTORED\r\n"},
                         {Value("b", "B"), 0, {}, Value("c", "WRONG"), milliseconds(50)},
                         {Value("c", "C")}});
  auto backend = MemcachedAt(server.port());
  Item item;
  Status extra = backend->Get("a", &item);
  INFO(extra.ToString());
  CHECK(extra.IsProtocolError());
  CHECK(backend->Store(StoreMode::kSet, "k", ItemView("v"), {}).IsProtocolError());
  REQUIRE(backend->Get("b", &item).ok());
  CHECK(item.value == "B");
  REQUIRE(server.WaitUntilStepsPlayed(3));  // its late bytes sent
  REQUIRE(backend->Get("c", &item).ok());
  CHECK(item.value == "C");
  CHECK(server.connections() == 4);
}

TEST_CASE("memcached: a batch's reply too many fails the batch", "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(),
                        {{"VALUE a 0 1\r\nA\r\nVALUE b 0 1\r\nB\r\nEND\r\nEND\r\n"},
                         {"VALUE a 0 1\r\nA\r\nEND\r\n"}});
  auto backend = MemcachedAt(server.port());
  std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kGet, 2);
  backend->Execute(batch);
  for (const auto& op : batch) {
    INFO(op.status.ToString());
    CHECK(op.status.IsProtocolError());
  }
  Item item;
  REQUIRE(backend->Get("a", &item).ok());
  CHECK(item.value == "A");
}

// A reply sent twice in a pipeline stands in for the next command's, whose own
// then arrives late, after the last reply the batch expects: read by the
// connection's next command, an add the server refused would be told STORED.
// A batch of several replies ends with a command of its own (memcached's
// version, Redis's PING), so the late reply arrives where its answer belongs:
// the batch fails (every answer in doubt), and the connection goes.
TEST_CASE("a reply sent twice in a batch whose own comes late answers no later command",
          "[stream][memcached][redis]") {
  // A batch of two sets, then an add on a key the server holds.
  auto check = [](cachet::Backend& backend, const ScriptedServer& server) {
    std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kStore, 2);
    backend.Execute(batch);
    for (const auto& op : batch) {
      INFO(op.key << ": " << op.status.ToString());
      CHECK(op.status.IsProtocolError());
      CHECK(op.status.message().find("a reply too many") != std::string_view::npos);
    }
    const Status add = backend.Store(StoreMode::kAdd, "c", ItemView("v"), {});
    INFO(add.ToString());
    CHECK(add.IsNotStored());
    CHECK(server.connections() == 2);
  };
  SECTION("memcached text") {
    ScriptedServer server(cachet::test::MemcachedTextRequests(),
                          {{"STORED\r\nSTORED\r\n"},
                           {"", 0, {}, "STORED\r\n", milliseconds(50)},
                           {"VERSION 1.6.18\r\n"},
                           {"NOT_STORED\r\n"}});
    check(*MemcachedAt(server.port()), server);
  }
  SECTION("Redis") {
    ScriptedServer server(cachet::test::RespRequests(),
                          {{"+OK\r\n+OK\r\n"},
                           {"", 0, {}, "+OK\r\n", milliseconds(50)},
                           {"+PONG\r\n"},
                           {"$-1\r\n"}});
    check(*RedisAt(server.port()), server);
  }
}

// memcached reads a data block it refuses ("bad data chunk") as commands and
// answers those too; paired in order, the incr of c would take b's 5 and the 7
// would arrive after the batch had ended.
TEST_CASE("memcached: after an error line that may put the stream out of step, no reply is paired",
          "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(),
                        {{"CLIENT_ERROR bad data chunk\r\nERROR\r\n"},
                         {"5\r\n"},
                         {"", 0, {}, "7\r\n", milliseconds(50)},
                         {""},  // the "version" that closes the batch
                         {Value("d", "D")}});
  auto backend = MemcachedAt(server.port());
  std::vector<cachet::Operation> batch(3);
  batch[0].kind = cachet::OpKind::kStore;
  batch[0].key = "a";
  batch[0].item = ItemView("v");
  batch[1].kind = cachet::OpKind::kIncr;
  batch[1].key = "b";
  batch[2].kind = cachet::OpKind::kIncr;
  batch[2].key = "c";
  backend->Execute(batch);
  CHECK(batch[0].status.message().find("bad data chunk") != std::string_view::npos);
  for (const auto& op : {batch[1], batch[2]}) {
    INFO(op.status.ToString());
    CHECK(op.status.IsProtocolError());
    CHECK(op.counter == 0);
  }
  // The connection that saw it is not reused.
  Item item;
  REQUIRE(backend->Get("d", &item).ok());
  CHECK(item.value == "D");
  CHECK(server.connections() == 2);
}

// A server that skips one reply of a pipeline and answers the next command:
// its answer pairs with the skipped command, and the exchange ends short (a
// timeout, or a close). Replies that pair by position are then in doubt, so no
// answer of the exchange stands, however it ended short.
void CheckNoneStands(const std::vector<cachet::Operation>& batch) {
  for (const auto& op : batch) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK((op.status.IsTimeout() || op.status.IsIoError()));
  }
}

TEST_CASE("a pipeline that ends short after a skipped reply keeps no answer",
          "[stream][redis][memcached][tokyotyrant]") {
  SECTION("Redis") {
    ScriptedServer server(cachet::test::RespRequests(),
                          {{Bulk("A")}, {":1\r\n"}, {""}, {Bulk("A")}});
    auto backend = RedisAt(server.port());
    std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kGet, 3);
    batch.insert(batch.begin() + 1, cachet::Operation{});
    batch[1].kind = cachet::OpKind::kIncr;
    batch[1].key = "n";
    batch[1].delta = 1;
    backend->Execute(batch);
    CheckNoneStands(batch);
  }
  SECTION("memcached text") {
    ScriptedServer server(cachet::test::MemcachedTextRequests(),
                          {{"DELETED\r\n"}, {""}, {"NOT_FOUND\r\n"}});
    auto backend = MemcachedAt(server.port());
    std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kRemove, 3);
    backend->Execute(batch);
    CheckNoneStands(batch);
  }
  SECTION("Tokyo Tyrant") {
    ScriptedServer server(TokyoTyrantRequest, {{std::string(1, '\0')}, {""}, {"\x01"}});
    auto backend = TokyoTyrantAt(server.port());
    std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kRemove, 3);
    backend->Execute(batch);
    CheckNoneStands(batch);
  }
}

// GetOrCompute's lease commands (meta mg with N, md) read one reply each: one
// that does not fit the command, or carries another token or key, is refused,
// and a connection that saw it, or an error line, is not used again.
TEST_CASE("memcached meta: a lease command's reply must be its own", "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(),
                        {{"VA 1 f0 c5 kother W O0\r\nx\r\n"},
                         {"VA 1 f0 c5 kk W O1\r\nx\r\n"},
                         {"HD O0\r\n"},
                         {"VA 1 f0 c5 O0\r\nx\r\n"},
                         {"SERVER_ERROR busy\r\n"},
                         {"VA 1 f0 c7 kk W O0\r\nv\r\n"}});
  auto backend =
      MemcachedAt(server.port(), kIoTimeout, milliseconds(3000), cachet::memcached::Protocol::kMeta);
  cachet::LeaseRequest request;
  request.lease = milliseconds(1000);
  for (const char* what : {"another key", "another token", "HD to mg"}) {
    INFO(what);
    Item item;
    cachet::LeaseGrant grant = cachet::LeaseGrant::kNone;
    std::uint64_t cas = 0;
    const Status s = backend->LeaseGet("k", request, &item, &grant, &cas);
    INFO(s.ToString());
    CHECK(s.IsProtocolError());
    CHECK(grant == cachet::LeaseGrant::kNone);
  }
  // A value is no answer to md; an error line is the outcome.
  const cachet::LeaseTicket ticket{"", 5};
  CHECK(backend->EndLease("k", ticket, cachet::LeaseEnd::kAbandonMiss).IsProtocolError());
  const Status busy = backend->EndLease("k", ticket, cachet::LeaseEnd::kAbandonMiss);
  CHECK(busy.message().find("busy") != std::string_view::npos);
  Item item;
  cachet::LeaseGrant grant = cachet::LeaseGrant::kNone;
  std::uint64_t cas = 0;
  REQUIRE(backend->LeaseGet("k", request, &item, &grant, &cas).ok());
  CHECK(item.value == "v");
  CHECK(grant == cachet::LeaseGrant::kWon);
  CHECK(cas == 7);
  CHECK(server.connections() == 6);
  const std::vector<std::string> asked = server.requests();
  REQUIRE(asked.size() == 6);
  CHECK(asked[0].starts_with("mg k v f c k N1 O0"));
}

// A server with CAS off (memcached -C) gives a won lease no token: giving it up
// must not delete or mark whatever item holds the key by then (another client's).
TEST_CASE("memcached meta: a lease won without a CAS token is not given back blind",
          "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(), {{"HD O0\r\n"}});
  auto backend =
      MemcachedAt(server.port(), kIoTimeout, milliseconds(3000), cachet::memcached::Protocol::kMeta);
  for (const auto end : {cachet::LeaseEnd::kAbandonMiss, cachet::LeaseEnd::kAbandonRefresh}) {
    CHECK(backend->EndLease("k", cachet::LeaseTicket{"", 0}, end).ok());
  }
  CHECK(server.requests().empty());
  // With a token, the give-back names it.
  CHECK(backend->EndLease("k", cachet::LeaseTicket{"", 9}, cachet::LeaseEnd::kAbandonMiss).ok());
  const std::vector<std::string> asked = server.requests();
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].find(" C9") != std::string::npos);
}

// flush_all is OK's, version VERSION's: a failover's repair counts a server
// flushed only on its OK.
TEST_CASE("memcached: an admin command's reply must be its own", "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(),
                        {{"VERSION 1.6.18\r\n"}, {"OK\r\n"}, {"OK\r\n"}, {"VERSION 1.6.18\r\n"}});
  auto backend = MemcachedAt(server.port());
  std::vector<std::string> version;
  const Status flushed = backend->Flush();
  INFO(flushed.ToString());
  CHECK(flushed.IsProtocolError());
  CHECK(backend->Extension("version", {}, &version).IsProtocolError());
  CHECK(backend->Flush().ok());
  REQUIRE(backend->Extension("version", {}, &version).ok());
  REQUIRE(version.size() == 1);
  CHECK(version[0].ends_with(" 1.6.18"));
  CHECK(server.connections() == 3);
}

TEST_CASE("Tokyo Tyrant: bytes that arrive while a connection is idle are nobody's reply",
          "[stream][tokyotyrant]") {
  ScriptedServer server(
      TokyoTyrantRequest,
      {{TokyoTyrantValue("A"), 0, {}, TokyoTyrantValue("WRONG"), milliseconds(50)},
       {TokyoTyrantValue("B")}});
  auto backend = TokyoTyrantAt(server.port());
  Item item;
  REQUIRE(backend->Get("a", &item).ok());
  CHECK(item.value == "A");
  REQUIRE(server.WaitUntilStepsPlayed(1));  // its late bytes sent
  REQUIRE(backend->Get("b", &item).ok());
  CHECK(item.value == "B");
}

// An operator reading the error learns which server to look at: the engine
// names it in a reader's error unless the store's reader did.
TEST_CASE("a reply no store can read is reported with its server's address",
          "[stream][memcached][redis][tokyotyrant]") {
  auto named = [](const Status& status, const ScriptedServer& server) {
    INFO(status.ToString());
    CHECK(status.IsProtocolError());
    const std::string where = "127.0.0.1:" + std::to_string(server.port());
    const std::string_view message = status.message();
    CHECK(message.find(where) != std::string_view::npos);
    CHECK(message.find(where) == message.rfind(where));  // once
  };
  Item item;
  {
    ScriptedServer server(cachet::test::MemcachedTextRequests(), {{"BOGUS\r\n"}, {"BOGUS\r\n"}});
    named(MemcachedAt(server.port())->Get("a", &item), server);
    auto meta = MemcachedAt(server.port(), kIoTimeout, milliseconds(3000),
                            cachet::memcached::Protocol::kMeta);
    named(meta->Get("a", &item), server);
  }
  {
    ScriptedServer server(cachet::test::RespRequests(), {{"BOGUS\r\n"}});
    named(RedisAt(server.port())->Get("a", &item), server);
  }
  {
    ScriptedServer server(TokyoTyrantRequest, {{"BOGUS"}});
    named(TokyoTyrantAt(server.port())->Get("a", &item), server);
  }
}

// A server that is not memcached may answer with bytes that never end a line
// (here a TLS alert to a plain-text request): they start no reply, so the call
// fails at once rather than at the I/O timeout, for single calls and batches.
TEST_CASE("memcached: bytes that start no reply are refused without waiting for a line end",
          "[stream][memcached]") {
  const std::string alert("\x15\x03\x03\x00\x02\x02\x46", 7);
  constexpr milliseconds kLongIo{3000};
  for (auto protocol : {cachet::memcached::Protocol::kText, cachet::memcached::Protocol::kMeta}) {
    for (const std::string& garbage : {alert, std::string("HELLO"), std::string("VALUX")}) {
      ScriptedServer server(cachet::test::MemcachedTextRequests(), {{garbage}});
      auto backend = MemcachedAt(server.port(), kLongIo, milliseconds(10000), protocol);
      Item item;
      Status single = backend->Get("a", &item);
      INFO(single.ToString());
      CHECK(single.IsProtocolError());
      CHECK(single.message().find("no reply starts with") != std::string_view::npos);
      // A text batch is one request line ("get a b"); a meta batch three (two
      // quiet gets and a no-op), all in the server's hands before it answers.
      const bool meta = protocol == cachet::memcached::Protocol::kMeta;
      ScriptedServer batch_server(cachet::test::MemcachedTextRequests(),
                                  std::vector<ScriptStep>(meta ? 3 : 1, ScriptStep(garbage)));
      auto batch_backend = MemcachedAt(batch_server.port(), kLongIo, milliseconds(10000), protocol);
      std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kGet, 2);
      batch_backend->Execute(batch);
      for (const cachet::Operation& op : batch) {
        INFO(op.status.ToString());
        CHECK(op.status.IsProtocolError());
      }
    }
  }
}

// In a pool of servers, the one that answered an error is the one to look at.
TEST_CASE("an error reply names its server", "[stream][memcached][tokyotyrant]") {
  auto named = [](const Status& status, const ScriptedServer& server) {
    INFO(status.ToString());
    CHECK(status.IsIoError());
    CHECK(status.message().find("127.0.0.1:" + std::to_string(server.port()) + ": ") !=
          std::string_view::npos);
  };
  const std::string refused = "SERVER_ERROR out of memory storing object\r\n";
  {
    ScriptedServer server(cachet::test::MemcachedTextRequests(), {{refused}, {refused}});
    named(MemcachedAt(server.port())->Store(StoreMode::kSet, "a", ItemView("v"), {}), server);
    auto meta = MemcachedAt(server.port(), kIoTimeout, milliseconds(3000),
                            cachet::memcached::Protocol::kMeta);
    named(meta->Store(StoreMode::kSet, "a", ItemView("v"), {}), server);
  }
  {
    ScriptedServer server(cachet::test::MemcachedTextRequests(),
                          {{refused}, {"END\r\n"}, {"VERSION 1.6.18\r\n"}});
    std::vector<cachet::Operation> batch(2);
    batch[0].kind = cachet::OpKind::kStore;
    batch[0].key = "a";
    batch[0].item = ItemView("v");
    batch[1].key = "b";
    MemcachedAt(server.port())->Execute(batch);
    named(batch[0].status, server);
    CHECK(batch[1].status.IsNotFound());
  }
  {
    ScriptedServer server(TokyoTyrantRequest, {{"\x01"}});
    auto backend = TokyoTyrantAt(server.port());
    named(backend->Store(StoreMode::kSet, "a", ItemView("v"), {}), server);
  }
}

// The commands that are not reads or writes name their server too: memcached's
// flush and stats, Tokyo Tyrant's vanish (flush) and stat.
TEST_CASE("an error reply to an admin command names its server",
          "[stream][memcached][tokyotyrant]") {
  auto named = [](const Status& status, const ScriptedServer& server, std::string_view said) {
    INFO(status.ToString());
    CHECK(status.IsIoError());
    CHECK(status.message().find("127.0.0.1:" + std::to_string(server.port()) + ": ") !=
          std::string_view::npos);
    CHECK(status.message().find(said) != std::string_view::npos);
  };
  const std::string refused = "SERVER_ERROR busy\r\n";
  {
    ScriptedServer server(cachet::test::MemcachedTextRequests(), {{refused}, {refused}});
    auto backend = MemcachedAt(server.port());
    named(backend->Flush(), server, "SERVER_ERROR busy");
    cachet::StatsMap stats;
    named(backend->Stats(&stats), server, "SERVER_ERROR busy");
  }
  {
    ScriptedServer server(TokyoTyrantBareRequest, {{"\x01"}, {"\x01"}});
    auto backend = TokyoTyrantAt(server.port());
    named(backend->Flush(), server, "vanish failed (status 01)");
    cachet::StatsMap stats;
    named(backend->Stats(&stats), server, "stat failed (status 01)");
  }
}

// memcached meta's quiet gets answer nothing on a miss; an error line among
// them, with no token, matches none of them: the batch fails, saying what the
// server said.
TEST_CASE("memcached meta: an error line among quiet gets keeps the server's words",
          "[stream][memcached]") {
  ScriptedServer server(cachet::test::MemcachedTextRequests(),
                        {{""}, {""}, {"SERVER_ERROR out of memory\r\nMN\r\n"}});
  auto backend = MemcachedAt(server.port(), kIoTimeout, milliseconds(3000),
                             cachet::memcached::Protocol::kMeta);
  std::vector<cachet::Operation> batch = Ops(cachet::OpKind::kGet, 2);
  backend->Execute(batch);
  for (const auto& op : batch) {
    INFO(op.status.ToString());
    CHECK(op.status.IsProtocolError());
    CHECK(op.status.message().find("SERVER_ERROR out of memory") != std::string_view::npos);
  }
}

// A server closes a pooled connection just as the client reuses it: the
// request goes out on a connection the server has stopped reading, and the
// answer is its close, with no byte of a reply. A read runs as well twice, so
// it is sent once more on a new connection; a write may have run and is not.
namespace {

// The second request is read and answered by a hang-up; the third, on a new
// connection, gets `reply`.
std::vector<ScriptStep> ClosesUnanswered(const std::string& first, const std::string& reply) {
  return {{first}, {"", 0, {}, {}, {}, true}, {reply}};
}

// The one server's health figures.
cachet::ServerHealth HealthOf(const cachet::Backend& backend) {
  std::vector<cachet::ServerHealth> servers;
  REQUIRE(backend.Health(&servers).ok());
  REQUIRE(servers.size() == 1);
  return servers.front();
}

// Stores a, then reads it alone: the answer is "A2", from the second
// connection, which the server's figures count.
template <class Backend>
void ReadsOneAgain(Backend& backend, const ScriptedServer& server) {
  REQUIRE(backend.Store(StoreMode::kSet, "a", ItemView("A"), {}).ok());
  Item item;
  Status read = backend.Get("a", &item);
  INFO(read.ToString());
  REQUIRE(read.ok());
  CHECK(item.value == "A2");
  CHECK(server.connections() == 2);
  CHECK(HealthOf(backend).connects == 2);
}

// Stores a, then reads a and b in one batch: both answered, b with "B".
template <class Backend>
void ReadsTwoInABatch(Backend& backend) {
  REQUIRE(backend.Store(StoreMode::kSet, "a", ItemView("A"), {}).ok());
  std::vector<cachet::Operation> ops = Ops(cachet::OpKind::kGet, 2);
  backend.Execute(ops);
  for (const auto& op : ops) {
    INFO(op.status.ToString());
    CHECK(op.status.ok());
  }
  CHECK(ops[1].result.value == "B");
  CHECK(HealthOf(backend).connects == 2);
}

}  // namespace

TEST_CASE("a read on a pooled connection the server closed unanswered is sent once more",
          "[stream][idle]") {
  Item item;
  SECTION("memcached text and meta, one get and a batch of gets") {
    for (auto protocol : {cachet::memcached::Protocol::kText, cachet::memcached::Protocol::kMeta}) {
      const bool meta = protocol == cachet::memcached::Protocol::kMeta;
      const std::string again = meta ? "VA 2 O0\r\nA2\r\n" : Value("a", "A2");
      ScriptedServer one(cachet::test::MemcachedTextRequests(),
                         ClosesUnanswered(meta ? "HD O0\r\n" : "STORED\r\n", again));
      ReadsOneAgain(*MemcachedAt(one.port(), kIoTimeout, milliseconds(3000), protocol), one);
    }
    ScriptedServer batch(cachet::test::MemcachedTextRequests(),
                         ClosesUnanswered("STORED\r\n", "VALUE a 0 1\r\nA\r\nVALUE b 0 1\r\n"
                                                         "B\r\nEND\r\n"));
    ReadsTwoInABatch(*MemcachedAt(batch.port()));
    CHECK(batch.connections() == 2);
  }
  SECTION("Redis, one GET and an MGET") {
    ScriptedServer one(cachet::test::RespRequests(), ClosesUnanswered("+OK\r\n", Bulk("A2")));
    ReadsOneAgain(*RedisAt(one.port()), one);

    ScriptedServer batch(cachet::test::RespRequests(),
                         ClosesUnanswered("+OK\r\n", "*2\r\n" + Bulk("A") + Bulk("B")));
    ReadsTwoInABatch(*RedisAt(batch.port()));
    CHECK(batch.connections() == 2);
  }
  SECTION("Tokyo Tyrant") {
    ScriptedServer server(TokyoTyrantRequest,
                          ClosesUnanswered(TokyoTyrantValue("A"), TokyoTyrantValue("A2")));
    auto backend = TokyoTyrantAt(server.port());
    REQUIRE(backend->Get("a", &item).ok());
    Status read = backend->Get("a", &item);
    INFO(read.ToString());
    REQUIRE(read.ok());
    CHECK(item.value == "A2");
    CHECK(server.connections() == 2);
  }
  SECTION("a write is not sent again: it may have run") {
    ScriptedServer server(cachet::test::MemcachedTextRequests(),
                          ClosesUnanswered("STORED\r\n", "STORED\r\n"));
    auto backend = MemcachedAt(server.port());
    REQUIRE(backend->Store(StoreMode::kSet, "a", ItemView("A"), {}).ok());
    Status write = backend->Store(StoreMode::kSet, "a", ItemView("B"), {});
    INFO(write.ToString());
    CHECK(write.IsIoError());
    CHECK(server.requests().size() == 2);
    CHECK(server.connections() == 1);
  }
}

// The resend waits for the whole first round: when a slow server in the same
// batch used the call's time up, the closed one is not asked again, and its
// idle close is not counted against it (failure_limit 1 would mark it dead).
TEST_CASE("a read whose batch has no time left is not sent again nor held against its server",
          "[stream][idle]") {
  const std::string slow_value(4000, 's');
  ScriptedServer closes(cachet::test::MemcachedTextRequests(),
                        ClosesUnanswered("STORED\r\n", Value("a", "A")));
  // Its value trickles: 40 pieces 25 ms apart, a second in all, past the 600 ms deadline.
  ScriptedServer slow(cachet::test::MemcachedTextRequests(),
                      {{"STORED\r\n"}, {Value("b", slow_value), 100, milliseconds(25)}});
  cachet::memcached::MemcachedOptions options;
  options.servers = {Loopback(closes.port()), Loopback(slow.port())};
  options.pool.connection.io_timeout = kIoTimeout;
  options.pool.connection.request_timeout = milliseconds(600);
  options.pool.failure_limit = 1;
  options.pool.retry_timeout = milliseconds(60000);
  cachet::memcached::MemcachedBackend backend(options);
  const auto distribution =
      cachet::net::Distribution::Create(options.distribution, options.servers);
  std::string on_closes, on_slow;  // a key of each server
  for (int i = 0; i < 1000 && (on_closes.empty() || on_slow.empty()); ++i) {
    const std::string key = "k" + std::to_string(i);
    (distribution->ServerFor(key) == 0 ? on_closes : on_slow) = key;
  }
  REQUIRE_FALSE(on_closes.empty());
  REQUIRE_FALSE(on_slow.empty());
  REQUIRE(backend.Store(StoreMode::kSet, on_closes, ItemView("A"), {}).ok());
  REQUIRE(backend.Store(StoreMode::kSet, on_slow, ItemView("B"), {}).ok());
  std::vector<cachet::Operation> ops(2);
  ops[0].key = on_closes;
  ops[1].key = on_slow;
  backend.Execute(ops);
  INFO(ops[0].status.ToString() << " | " << ops[1].status.ToString());
  CHECK(ops[0].status.IsIoError());
  CHECK(ops[1].status.IsTimeout());
  CHECK(closes.connections() == 1);  // not dialled again
  std::vector<cachet::ServerHealth> health;
  REQUIRE(backend.Health(&health).ok());
  REQUIRE(health.size() == 2);
  CHECK_FALSE(health[0].dead);
  CHECK(health[1].dead);  // the slow one did time out
}

namespace {

// The I/O timeout of ReadsWhileValueArrives: seven of its pauses, so that a
// loaded machine's stall of the server's thread is no silence.
constexpr milliseconds kPieceIo{700};

// A server that sends `reply` twice, each time in 20 pieces 100 ms apart (two
// seconds in all, never silent for kPieceIo): `open(port, request_timeout)`
// makes a backend; one with time enough reads the value whole, one with a
// 1 s request timeout gives up within it.
template <class Open>
void ReadsWhileValueArrives(cachet::test::RequestFramer framer, const std::string& reply,
                            const std::string& value, Open open) {
  const std::size_t piece = reply.size() / 20 + 1;
  ScriptedServer server(std::move(framer),
                        {{reply, piece, milliseconds(100)}, {reply, piece, milliseconds(100)}});
  Item item;
  Status slow = open(server.port(), milliseconds(6000))->Get("k", &item);
  INFO(slow.ToString());
  REQUIRE(slow.ok());
  CHECK(item.value == value);
  auto hurried = open(server.port(), milliseconds(1000));
  const auto started = std::chrono::steady_clock::now();
  Status cut = hurried->Get("k", &item);
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(cut.ToString());
  CHECK(cut.IsTimeout());
  CHECK(took < milliseconds(1600));  // the whole value would take 2 s
}

}  // namespace

TEST_CASE("a value that keeps arriving is read past io_timeout, but not past request_timeout",
          "[stream][deadline]") {
  const std::string value(200 * 1024, 'x');
  SECTION("Redis") {
    ReadsWhileValueArrives(
        cachet::test::RespRequests(), Bulk(value), value,
        [](int port, milliseconds request) { return RedisAt(port, kPieceIo, request); });
  }
  SECTION("memcached") {
    ReadsWhileValueArrives(
        cachet::test::MemcachedTextRequests(), Value("k", value), value,
        [](int port, milliseconds request) { return MemcachedAt(port, kPieceIo, request); });
  }
}

namespace {

// `threads` threads each set and read back their own key `rounds` times, with
// `idle` between rounds; returns the failures seen.
template <class Backend>
std::vector<std::string> RoundsWithIdleGaps(Backend& backend, int threads, int rounds,
                                            milliseconds idle) {
  std::vector<std::string> failures;
  std::mutex mutex;
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) std::this_thread::sleep_for(idle);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t, round] {
        const std::string key = "key" + std::to_string(t);
        const std::string value = "v" + std::to_string(round);
        Status set = backend.Store(StoreMode::kSet, key, ItemView(value), {});
        Item item;
        Status get = set.ok() ? backend.Get(key, &item) : set;
        if (get.ok() && item.value != value) get = Status::Corruption("wrong value " + item.value);
        if (!get.ok()) {
          std::lock_guard lock(mutex);
          failures.push_back("round " + std::to_string(round) + ": " + get.ToString());
        }
      });
    }
    for (auto& w : workers) w.join();
  }
  return failures;
}

// The number a server's stats give for `name` (the first line whose name ends
// in it), or -1.
template <class Backend>
long long StatNumber(Backend& backend, const std::string& name) {
  cachet::StatsMap stats;
  if (!backend.Stats(&stats).ok()) return -1;
  for (const auto& [key, value] : stats) {
    if (key == name || key.ends_with(" " + name)) return std::stoll(value);
  }
  return -1;
}

// 4 threads, 3 rounds with `idle` between them: no call fails. Then the
// server is shown to close idle connections: after `idle` the next call (a
// stats call, whose `connections_stat` counts connections) had to connect anew.
template <class Backend>
void SurvivesIdleCloses(Backend& backend, milliseconds idle, const std::string& connections_stat) {
  const std::uint64_t faults = cachet::net::StreamFaults();
  auto failures = RoundsWithIdleGaps(backend, 4, 3, idle);
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  // A close is no stream fault: it leaves a near cache's entries alone.
  CHECK(cachet::net::StreamFaults() == faults);
  const long long before = StatNumber(backend, connections_stat);
  std::this_thread::sleep_for(idle);
  CHECK(StatNumber(backend, connections_stat) == before + 1);
}

// A value is stored, the server restarts while the client is idle, and the
// next read is served: a miss (the restart emptied the server), not an error.
template <class Backend>
void SurvivesRestart(Backend& backend, cachet::test::ServerProcess& server) {
  REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(server.Restart().ok());
  Item item;
  Status s = backend.Get("k", &item);
  INFO(s.ToString());
  CHECK(s.IsNotFound());
}

}  // namespace

TEST_CASE("connections a server closed while idle cost no call", "[stream][idle]") {
  SECTION("redis-server --timeout 1") {
    auto server = cachet::test::StartRedis({"--timeout", "1"});
    REQUIRE(server.ok());
    // Closed one to two seconds after its last command; 1.5 s more for a loaded machine.
    SurvivesIdleCloses(*RedisAt((*server)->port(), milliseconds(1000)), milliseconds(3500),
                       "total_connections_received");
  }
  SECTION("memcached -o idle_timeout=1") {
    // memcached's idle check runs about once a second on a one-second clock:
    // an idle connection is closed two to three seconds after its last command.
    auto server = cachet::test::StartMemcached({"-o", "idle_timeout=1"});
    REQUIRE(server.ok());
    SurvivesIdleCloses(*MemcachedAt((*server)->port(), milliseconds(1000)), milliseconds(5000),
                       "total_connections");
  }
}

TEST_CASE("a server restarted while the client was idle serves the next call", "[stream][idle]") {
  SECTION("Redis") {
    auto server = cachet::test::StartRedis();
    REQUIRE(server.ok());
    SurvivesRestart(*RedisAt((*server)->port(), milliseconds(1000)), **server);
  }
  SECTION("memcached") {
    auto server = cachet::test::StartMemcached();
    REQUIRE(server.ok());
    SurvivesRestart(*MemcachedAt((*server)->port(), milliseconds(1000)), **server);
  }
}

TEST_CASE("Redis: a 100 MB value is written and read back whole", "[stream][redis][large]") {
  // redis-server copies a value into its reply before it sends a byte of it,
  // so it is silent for a time that grows with the size: past the default
  // io_timeout (1 s) for 100 MB on a loaded machine. The timeouts follow from
  // the size, at 10 MB/s, far slower than any machine the tests run on.
  constexpr std::size_t kSize = 100 * 1024 * 1024;
  constexpr std::size_t kSlowestBytesPerSecond = 10 * 1024 * 1024;
  const milliseconds silence(1000 * kSize / kSlowestBytesPerSecond);
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = RedisAt((*server)->port(), silence, 3 * silence);
  std::string value(kSize, 'v');
  for (std::size_t i = 0; i < value.size(); i += 4096) value[i] = static_cast<char>('a' + i % 26);
  Status set = backend->Store(StoreMode::kSet, "big", ItemView(value), {});
  INFO(set.ToString());
  REQUIRE(set.ok());
  for (int read = 0; read < 3; ++read) {
    Item item;
    Status get = backend->Get("big", &item);
    INFO(get.ToString());
    REQUIRE(get.ok());
    CHECK(item.value == value);
  }
}

// A server that refuses a request answers and hangs up before taking all of it
// (redis-server with a value over proto-max-bulk-len): the send fails, quoting
// the refusal, or, when the client reads the answer before the close, the
// request ends answered before it was sent whole. Either way the server, which
// answered, is not held to blame: other calls go on, however many such values
// are refused in a row.
TEST_CASE("Redis: values over proto-max-bulk-len do not mark the server dead",
          "[stream][redis][large]") {
  auto server = cachet::test::StartRedis({"--proto-max-bulk-len", "1mb"});
  REQUIRE(server.ok());
  cachet::redis::RedisOptions options;
  options.servers.push_back(Loopback((*server)->port()));
  options.pool.retry_timeout = milliseconds(60000);  // a server marked dead stays so
  cachet::redis::RedisBackend backend(std::move(options));
  // Larger than the socket buffers take, so the server's close fails the send.
  const std::string value(30 * 1024 * 1024, 'v');
  for (int attempt = 0; attempt < 3; ++attempt) {
    Status refused = backend.Store(StoreMode::kSet, "big", ItemView(value), {});
    INFO(refused.ToString());
    CHECK_FALSE(refused.ok());
    CHECK((refused.message().find("invalid bulk length") != std::string_view::npos ||
           refused.message().find("before the request was sent whole") != std::string_view::npos));
  }
  REQUIRE(backend.Store(StoreMode::kSet, "small", ItemView("v"), {}).ok());
  std::vector<cachet::ServerHealth> health;
  REQUIRE(backend.Health(&health).ok());
  REQUIRE(health.size() == 1);
  CHECK(health[0].marked_dead == 0);
  CHECK(health[0].consecutive_failures == 0);
}
