// net::BatchRunner and the lone call (net::CallServer) against scripted
// loopback servers and a port nobody listens on: grouping by server, settling,
// health reports, the login hook, and the per-owner reuse of batches.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/net/batch_runner.h"
#include "cachet/net/exchange.h"
#include "cachet/net/lone_call.h"
#include "launchers/server_process.h"
#include "support/scripted_server.h"

namespace cachet::net {
namespace {

using std::chrono::milliseconds;

ServerAddress Loopback(int port) { return {"127.0.0.1", static_cast<std::uint16_t>(port), 1}; }

// A line protocol: "get KEY\r\n" per operation, one reply line each: the value,
// or "MISS". The store's side of the runner in a few lines.
class LineBatch final : public ServerBatch {
 public:
  void Reset() {
    request_.clear();
    ops_.clear();
    answered_ = 0;
    poisoned_ = false;
  }
  void Add(Operation& op) {
    request_ += "get " + std::string(op.key) + "\r\n";
    ops_.push_back(&op);
  }
  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }
  Status Consume(ReadBuffer& buffer) override {
    while (answered_ < ops_.size()) {
      const std::size_t end = buffer.data().find("\r\n");
      if (end == std::string_view::npos) return Status::OK();
      const std::string_view line = buffer.data().substr(0, end);
      if (throw_on_reply) throw std::runtime_error("a reader that throws");
      // A reply the store no longer trusts the stream after, though it reads it.
      if (line == "POISON") poisoned_ = true;
      Operation& op = *ops_[answered_++];
      if (line == "MISS") {
        op.status = Status::NotFound();
      } else {
        op.result.value.assign(line);
        op.status = Status::OK();
      }
      buffer.Consume(end + 2);
    }
    return Status::OK();
  }
  bool done() const noexcept override { return answered_ == ops_.size(); }
  void Settle(const Status& transport) override {
    settled++;
    for (std::size_t i = answered_; i < ops_.size(); ++i) ops_[i]->status = transport;
  }

  bool poisoned() const noexcept override { return poisoned_; }

  int settled = 0;
  bool throw_on_reply = false;

 private:
  bool poisoned_ = false;
  std::string request_;
  std::vector<Operation*> ops_;
  std::size_t answered_ = 0;
};

// Fills `slot` with a LineBatch of `group`, as a store's fill function does.
ServerBatch* FillLines(std::size_t, std::span<Operation* const> group,
                       std::unique_ptr<ServerBatch>& slot) {
  if (!slot) slot = std::make_unique<LineBatch>();
  auto& batch = static_cast<LineBatch&>(*slot);
  batch.Reset();
  for (Operation* op : group) batch.Add(*op);
  return &batch;
}

std::unique_ptr<ServerPool> PoolOf(const std::vector<int>& ports, std::uint32_t failure_limit = 2,
                                   std::size_t max_connections = 0) {
  std::vector<ServerAddress> servers;
  for (int port : ports) servers.push_back(Loopback(port));
  ServerPoolOptions options;
  options.failure_limit = failure_limit;
  options.max_connections = max_connections;
  options.retry_timeout = milliseconds(60000);
  options.connection.connect_timeout = milliseconds(2000);
  options.connection.io_timeout = milliseconds(2000);
  return std::make_unique<ServerPool>(
      servers, Distribution::Create(DistributionKind::kModula, servers), options);
}

std::vector<ServerHealth> HealthOf(const ServerPool& pool) {
  std::vector<ServerHealth> health;
  pool.AppendHealth(&health);
  return health;
}

// Operations view their keys: `keys` must outlive them (string literals do).
std::vector<Operation> Gets(const std::vector<std::string>& keys) {
  std::vector<Operation> ops(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ops[i].key = keys[i];
  return ops;
}
std::vector<Operation> Gets(std::initializer_list<std::string_view> literals) {
  std::vector<Operation> ops;
  for (std::string_view key : literals) ops.emplace_back().key = key;
  return ops;
}

TEST_CASE("the runner sends each server its group in one exchange and settles it",
          "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"A1\r\n"}, {"MISS\r\n"}});
  test::ScriptedServer b(test::MemcachedTextRequests(), {{"B1\r\n"}});
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  auto pool = PoolOf({a.port(), b.port()});
  const std::vector<std::string> keys = {"a1", "b1", "a2"};
  std::vector<Operation> ops = Gets(keys);
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  runner.Add(0, ops[0]);
  runner.Add(1, ops[1]);
  runner.Add(0, ops[2]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK(runner.Run(pool->CallDeadline()));
  CHECK(ops[0].status.ok());
  CHECK(ops[0].result.value == "A1");
  CHECK(ops[1].result.value == "B1");
  CHECK(ops[2].status.IsNotFound());
  CHECK(runner.status(0).ok());
  CHECK(runner.status(1).ok());
  REQUIRE(a.WaitUntilPlayed());
  CHECK(a.requests() == std::vector<std::string>{"get a1\r\n", "get a2\r\n"});
  CHECK(a.connections() == 1);  // both of server a's operations in one exchange
  CHECK(b.requests() == std::vector<std::string>{"get b1\r\n"});
}

TEST_CASE("AddRouted groups an operation by its route, or settles it when no server can take it",
          "[batch_runner]") {
  test::ScriptedServer live(test::MemcachedTextRequests(), {{"V\r\n"}});
  REQUIRE(live.port() > 0);
  auto pool = PoolOf({live.port()});
  std::vector<Operation> ops = Gets({"k"});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  runner.AddRouted(*pool, ops[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK(runner.Run(pool->CallDeadline()));
  CHECK(ops[0].result.value == "V");

  // A server marked dead (one failure, failure_limit 1) is no route: the
  // operation takes the route's error and nothing is enlisted for it.
  const test::RefusingPort refusing;
  auto dead = PoolOf({refusing.port()}, /*failure_limit=*/1);
  std::vector<Operation> first = Gets({"x"});
  runner.Claim(BatchRunner::NewOwner(), dead->size());
  runner.AddRouted(*dead, first[0]);
  runner.EnlistGroups(*dead, FillLines);
  CHECK_FALSE(runner.Run(dead->CallDeadline()));
  REQUIRE_FALSE(dead->Available(0));
  std::vector<Operation> later = Gets({"y"});
  runner.AddRouted(*dead, later[0]);
  int fills = 0;
  runner.EnlistGroups(*dead, [&](std::size_t server, std::span<Operation* const> group,
                                 std::unique_ptr<ServerBatch>& slot) {
    ++fills;
    return FillLines(server, group, slot);
  });
  CHECK(fills == 0);
  INFO(later[0].status.ToString());
  CHECK(later[0].status.IsUnavailable());
}

TEST_CASE("a server that fails gives its operations the exchange's status and is reported",
          "[batch_runner]") {
  test::ScriptedServer live(test::MemcachedTextRequests(), {{"L\r\n"}});
  REQUIRE(live.port() > 0);
  const test::RefusingPort refusing;
  const int nobody = refusing.port();
  auto pool = PoolOf({live.port(), nobody}, /*failure_limit=*/2);
  std::vector<Operation> ops = Gets({"l", "x", "y"});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  runner.Add(0, ops[0]);
  runner.Add(1, ops[1]);
  runner.Add(1, ops[2]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK_FALSE(runner.Run(pool->CallDeadline()));
  CHECK(ops[0].result.value == "L");
  INFO(ops[1].status.ToString());
  CHECK(ops[1].status.IsUnavailable());  // connection refused: an error, never a miss
  CHECK(ops[2].status.IsUnavailable());
  CHECK(runner.status(0).ok());
  CHECK(runner.status(1).IsUnavailable());
  CHECK(runner.sent(0));
  CHECK_FALSE(runner.sent(1));  // refused before anything went out: safe to send again
  // One report per exchange, not per operation: two failures would be the limit.
  CHECK(pool->Available(1));
  std::vector<ServerHealth> health = HealthOf(*pool);
  CHECK(health[0].requests == 1);
  CHECK(health[0].errors == 0);
  CHECK(health[1].requests == 1);
  CHECK(health[1].errors == 1);
  CHECK(health[1].unavailable == 1);
  // A second failing exchange reaches the limit.
  std::vector<Operation> again = Gets({"z"});
  runner.Add(1, again[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK_FALSE(runner.Run(pool->CallDeadline()));
  CHECK_FALSE(pool->Available(1));  // reported through the pool's health rule
  health = HealthOf(*pool);
  CHECK(health[1].requests == 2);
  CHECK(health[1].marked_dead == 1);
}

// A login of one line, "login\r\n", answered "OK" or refused with "NO".
class LineLogin final : public Login {
 public:
  iovec* Request(int* count) override {
    piece_ = {const_cast<char*>(kLine.data()), kLine.size()};
    *count = 1;
    return &piece_;
  }
  Status Consume(ReadBuffer& buffer) override {
    const std::size_t end = buffer.data().find("\r\n");
    if (end == std::string_view::npos) return Status::OK();
    const bool refused = buffer.data().substr(0, end) == "NO";
    buffer.Consume(end + 2);
    answered_ = true;
    return refused ? Status::AuthFailed("wrong password") : Status::OK();
  }
  bool done() const noexcept override { return answered_; }

 private:
  static constexpr std::string_view kLine = "login\r\n";
  iovec piece_{};
  bool answered_ = false;
};

// The setup of the line protocol: a LineLogin on every connection connected anew.
class LineSetup final : public ConnectionSetup {
 public:
  std::unique_ptr<Login> NewLogin(const Connection&) const override {
    logins++;
    return std::make_unique<LineLogin>();
  }
  mutable int logins = 0;
};

TEST_CASE("a refused login settles its server's operations without sending them",
          "[batch_runner]") {
  test::ScriptedServer good(test::MemcachedTextRequests(), {{"OK\r\n"}, {"G\r\n"}, {"H\r\n"}});
  test::ScriptedServer refused(test::MemcachedTextRequests(), {{"NO\r\n"}});
  REQUIRE(good.port() > 0);
  REQUIRE(refused.port() > 0);
  auto pool = PoolOf({good.port(), refused.port()}, /*failure_limit=*/1);
  std::vector<Operation> ops = Gets({"g", "r"});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  runner.Add(0, ops[0]);
  runner.Add(1, ops[1]);
  runner.EnlistGroups(*pool, FillLines);
  const LineSetup setup;
  CHECK_FALSE(runner.Run(pool->CallDeadline(), &setup));
  CHECK(setup.logins == 2);
  CHECK(ops[0].result.value == "G");
  CHECK(ops[1].status.IsAuthFailed());
  CHECK(runner.sent(0));
  CHECK_FALSE(runner.sent(1));  // the login failed: the request never went out
  CHECK(refused.requests() == std::vector<std::string>{"login\r\n"});
  CHECK(pool->Available(1));  // wrong credentials count neither way
  const std::vector<ServerHealth> health = HealthOf(*pool);
  CHECK(health[0].requests == 1);
  CHECK(health[1].requests == 1);  // reported once, as the refused login
  CHECK(health[1].consecutive_failures == 0);
  // The pooled connection is logged in already: no second login.
  std::vector<Operation> again = Gets({"h"});
  runner.Add(0, again[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK(runner.Run(pool->CallDeadline(), &setup));
  CHECK(again[0].result.value == "H");
  CHECK(setup.logins == 2);
  REQUIRE(good.WaitUntilPlayed());
  CHECK(good.requests() == std::vector<std::string>{"login\r\n", "get g\r\n", "get h\r\n"});
}

TEST_CASE("a connection whose login failed is closed, not pooled as ready", "[batch_runner]") {
  test::ScriptedServer server(test::MemcachedTextRequests(), {{"NO\r\n"}, {"OK\r\n"}, {"V\r\n"}});
  REQUIRE(server.port() > 0);
  auto pool = PoolOf({server.port()});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  const LineSetup setup;
  std::vector<Operation> first = Gets({"a"});
  runner.Add(0, first[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK_FALSE(runner.Run(pool->CallDeadline(), &setup));
  CHECK(first[0].status.IsAuthFailed());
  std::vector<Operation> second = Gets({"b"});
  runner.Add(0, second[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK(runner.Run(pool->CallDeadline(), &setup));
  CHECK(second[0].result.value == "V");
  REQUIRE(server.WaitUntilPlayed());
  CHECK(server.connections() == 2);  // the refused connection was not lent again
  CHECK(server.requests() == std::vector<std::string>{"login\r\n", "login\r\n", "get b\r\n"});
}

TEST_CASE("a request that went out before its server hung up counts as sent", "[batch_runner]") {
  // The server reads the request and hangs up without a reply: the command may
  // have run, so it must not be sent again (net/retry.h).
  test::ScriptedServer server(test::MemcachedTextRequests(), {{"", 0, {}, {}, {}, true}});
  REQUIRE(server.port() > 0);
  auto pool = PoolOf({server.port()});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  std::vector<Operation> ops = Gets({"k"});
  runner.Add(0, ops[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK_FALSE(runner.Run(pool->CallDeadline()));
  INFO(runner.status(0).ToString());
  CHECK(runner.status(0).IsIoError());
  CHECK(runner.sent(0));
  CHECK(ops[0].status.IsIoError());
}

TEST_CASE("a poisoned batch's connection is closed after its exchange", "[batch_runner]") {
  test::ScriptedServer server(test::MemcachedTextRequests(), {{"POISON\r\n"}, {"OK\r\n"}});
  REQUIRE(server.port() > 0);
  auto pool = PoolOf({server.port()});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  for (const char* expected : {"POISON", "OK"}) {
    std::vector<Operation> ops = Gets({"k"});
    runner.Add(0, ops[0]);
    runner.EnlistGroups(*pool, FillLines);
    CHECK(runner.Run(pool->CallDeadline()));
    CHECK(ops[0].result.value == expected);
  }
  REQUIRE(server.WaitUntilPlayed());
  CHECK(server.connections() == 2);
}

TEST_CASE("an exchange that would begin past the deadline times out and is not reported",
          "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"A\r\n"}});
  test::ScriptedServer b(test::MemcachedTextRequests(), {{"B\r\n"}});
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  // One connection per server; the test holds server a's, so the runner waits
  // for it until the call's deadline before it gets to server b.
  auto pool = PoolOf({a.port(), b.port()}, /*failure_limit=*/2, /*max_connections=*/1);
  ServerPool::Lease held = pool->Acquire(0);
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  for (int round = 0; round < 2; ++round) {  // two would mark a counted server dead
    std::vector<Operation> ops = Gets({"a", "b"});
    runner.Add(0, ops[0]);
    runner.Add(1, ops[1]);
    runner.EnlistGroups(*pool, FillLines);
    CHECK_FALSE(runner.Run(Clock::now() + milliseconds(200)));
    INFO(ops[1].status.ToString());
    CHECK(ops[0].status.IsTimeout());
    CHECK(ops[1].status.IsTimeout());
    CHECK(runner.status(1).IsTimeout());
    CHECK_FALSE(runner.sent(0));
    CHECK_FALSE(runner.sent(1));
  }
  CHECK(pool->Available(0));
  CHECK(pool->Available(1));
  const std::vector<ServerHealth> health = HealthOf(*pool);
  CHECK(health[1].requests == 0);  // server b was asked nothing
  CHECK(health[1].errors == 0);
  CHECK(health[0].errors == 0);
  CHECK(health[0].pool_timeouts == 2);
  CHECK(b.requests().empty());
}

TEST_CASE("exchanges of several pools run in one Run, each reported to its own pool",
          "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"A\r\n"}});
  test::ScriptedServer b(test::MemcachedTextRequests(), {{"B\r\n"}});
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  auto pool_a = PoolOf({a.port()});
  auto pool_b = PoolOf({b.port()});
  std::vector<Operation> ops = Gets({"a", "b"});
  LineBatch batch_a;
  LineBatch batch_b;
  batch_a.Add(ops[0]);
  batch_b.Add(ops[1]);
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), 1);
  runner.Enlist(*pool_a, 0, batch_a);
  runner.Enlist(*pool_b, 0, batch_b);
  CHECK(runner.Run(pool_a->CallDeadline()));
  CHECK(ops[0].result.value == "A");
  CHECK(ops[1].result.value == "B");
  CHECK(runner.status(0).ok());
  CHECK(runner.status(1).ok());
  CHECK(batch_a.settled == 1);
  CHECK(batch_b.settled == 1);
  CHECK(HealthOf(*pool_a)[0].requests == 1);
  CHECK(HealthOf(*pool_b)[0].requests == 1);
}

// A fill that throws for server 1, after server 0's batch was enlisted.
ServerBatch* FillOrThrowForServer1(std::size_t server, std::span<Operation* const> group,
                                   std::unique_ptr<ServerBatch>& slot) {
  if (server == 1) throw std::runtime_error("a fill that throws");
  return FillLines(server, group, slot);
}

TEST_CASE("a fill that throws leaves the runner clean for the next batch", "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"A2\r\n"}});
  test::ScriptedServer b(test::MemcachedTextRequests(), {{"never\r\n"}});
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  auto pool = PoolOf({a.port(), b.port()});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  {
    std::vector<Operation> lost = Gets({"a1", "b1", "b2"});
    runner.Add(0, lost[0]);
    runner.Add(1, lost[1]);
    runner.Add(1, lost[2]);
    CHECK_THROWS_AS(runner.EnlistGroups(*pool, FillOrThrowForServer1), std::runtime_error);
  }  // the operations of the failed call are gone
  std::vector<Operation> ops = Gets({"a2"});
  runner.Add(0, ops[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK(runner.Run(pool->CallDeadline()));
  CHECK(ops[0].result.value == "A2");
  REQUIRE(a.WaitUntilPlayed());
  CHECK(a.requests() == std::vector<std::string>{"get a2\r\n"});  // sent once, alone
  CHECK(b.requests().empty());  // the failed call's group was dropped
}

TEST_CASE("a reader that throws leaves no leased connection behind", "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"A1\r\n"}, {"A2\r\n"}});
  REQUIRE(a.port() > 0);
  auto pool = PoolOf({a.port()});
  BatchRunner runner;
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  std::vector<Operation> first = Gets({"a1"});
  runner.Add(0, first[0]);
  runner.EnlistGroups(*pool, FillLines);
  static_cast<LineBatch&>(*runner.slot(0)).throw_on_reply = true;
  CHECK_THROWS_AS(runner.Run(pool->CallDeadline()), std::runtime_error);
  CHECK(runner.slot(0) == nullptr);  // the batch that held the failed call's operations is gone
  std::vector<Operation> second = Gets({"a2"});
  runner.Add(0, second[0]);
  runner.EnlistGroups(*pool, FillLines);
  CHECK(runner.Run(pool->CallDeadline()));
  CHECK(second[0].result.value == "A2");  // not the reply the throwing reader left unread
  REQUIRE(a.WaitUntilPlayed());
  CHECK(a.connections() == 2);  // the connection of the failed call was closed
}

TEST_CASE("a runner keeps its batches for its owner and drops them for another", "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"1\r\n"}, {"2\r\n"}});
  REQUIRE(a.port() > 0);
  auto pool = PoolOf({a.port()});
  const std::uint64_t owner = BatchRunner::NewOwner();
  BatchRunner runner;
  runner.Claim(owner, pool->size());
  for (const char* expected : {"1", "2"}) {
    std::vector<Operation> ops = Gets({"k"});
    runner.Claim(owner, pool->size());
    runner.Add(0, ops[0]);
    runner.EnlistGroups(*pool, FillLines);
    REQUIRE(runner.Run(pool->CallDeadline()));
    CHECK(ops[0].result.value == expected);
  }
  REQUIRE(runner.slot(0) != nullptr);
  CHECK(static_cast<LineBatch&>(*runner.slot(0)).settled == 2);  // one batch, reused
  // A run with nothing enlisted (every operation refused before the wire) sends nothing.
  CHECK(runner.Run(pool->CallDeadline()));
  CHECK(static_cast<LineBatch&>(*runner.slot(0)).settled == 2);
  REQUIRE(a.WaitUntilPlayed());
  CHECK(a.requests().size() == 2);
  runner.Claim(BatchRunner::NewOwner(), pool->size());
  CHECK(runner.slot(0) == nullptr);
}

// One get through the lone call, as a store's single operation runs it: the
// exchange reads with a LineBatch of one and closes a poisoned connection.
// `*asked` says whether the exchange ran (the request went out).
Status LoneGet(ServerPool& pool, Operation& op, Deadline deadline,
               const ConnectionSetup* setup = nullptr, bool* asked = nullptr) {
  LineBatch batch;
  batch.Reset();
  batch.Add(op);
  std::vector<iovec> request;
  batch.Request(&request);
  const Status transport = CallServer(
      pool, 0, ServerPool::Use::kReadsReplies, Clock::now(), deadline, setup,
      [&](Connection& connection, Clock::time_point began) {
        if (asked != nullptr) *asked = true;
        Status s = RunLoneExchange(connection, request.data(), static_cast<int>(request.size()),
                                   batch, began, deadline);
        if (batch.poisoned()) connection.Close();
        return s;
      });
  batch.Settle(transport);
  return transport;
}

TEST_CASE("a lone call connects, logs in once, and pools its connection", "[lone_call]") {
  test::ScriptedServer server(test::MemcachedTextRequests(), {{"OK\r\n"}, {"A\r\n"}, {"B\r\n"}});
  REQUIRE(server.port() > 0);
  auto pool = PoolOf({server.port()});
  const LineSetup setup;
  for (const char* key : {"a", "b"}) {
    std::vector<Operation> ops = Gets({key});
    const Status s = LoneGet(*pool, ops[0], pool->CallDeadline(), &setup);
    INFO(s.ToString());
    CHECK(s.ok());
    CHECK(ops[0].status.ok());
  }
  CHECK(setup.logins == 1);
  REQUIRE(server.WaitUntilPlayed());
  CHECK(server.connections() == 1);
  CHECK(server.requests() == std::vector<std::string>{"login\r\n", "get a\r\n", "get b\r\n"});
  const std::vector<ServerHealth> health = HealthOf(*pool);
  CHECK(health[0].requests == 2);
  CHECK(health[0].connects == 1);
}

TEST_CASE("a lone call whose login is refused sends nothing and drops the connection",
          "[lone_call]") {
  test::ScriptedServer server(test::MemcachedTextRequests(), {{"NO\r\n"}, {"OK\r\n"}, {"V\r\n"}});
  REQUIRE(server.port() > 0);
  auto pool = PoolOf({server.port()}, /*failure_limit=*/1);
  const LineSetup setup;
  std::vector<Operation> first = Gets({"a"});
  bool asked = false;
  CHECK(LoneGet(*pool, first[0], pool->CallDeadline(), &setup, &asked).IsAuthFailed());
  CHECK_FALSE(asked);
  CHECK(first[0].status.IsAuthFailed());
  CHECK(pool->Available(0));  // wrong credentials count neither way
  CHECK(HealthOf(*pool)[0].requests == 1);  // reported once, as the refused login
  std::vector<Operation> second = Gets({"b"});
  CHECK(LoneGet(*pool, second[0], pool->CallDeadline(), &setup).ok());
  CHECK(second[0].result.value == "V");
  REQUIRE(server.WaitUntilPlayed());
  CHECK(server.connections() == 2);  // the refused connection was not lent again
  CHECK(server.requests() == std::vector<std::string>{"login\r\n", "login\r\n", "get b\r\n"});
}

TEST_CASE("a lone call's failure is reported, and a connection its exchange closed is not reused",
          "[lone_call]") {
  SECTION("nobody listens: the server is held to account") {
    const test::RefusingPort refusing;
    auto pool = PoolOf({refusing.port()}, /*failure_limit=*/2);
    for (int round = 0; round < 2; ++round) {
      std::vector<Operation> ops = Gets({"k"});
      bool asked = false;
      const Status s = LoneGet(*pool, ops[0], pool->CallDeadline(), nullptr, &asked);
      INFO(s.ToString());
      CHECK(s.IsUnavailable());  // connection refused: an error, never a miss
      CHECK(ops[0].status.IsUnavailable());
      CHECK_FALSE(asked);
    }
    CHECK_FALSE(pool->Available(0));
    CHECK(HealthOf(*pool)[0].marked_dead == 1);
  }
  SECTION("a reply that leaves the stream out of step: the next call connects anew") {
    test::ScriptedServer server(test::MemcachedTextRequests(), {{"POISON\r\n"}, {"OK\r\n"}});
    REQUIRE(server.port() > 0);
    auto pool = PoolOf({server.port()});
    for (const char* expected : {"POISON", "OK"}) {
      std::vector<Operation> ops = Gets({"k"});
      CHECK(LoneGet(*pool, ops[0], pool->CallDeadline()).ok());
      CHECK(ops[0].result.value == expected);
    }
    REQUIRE(server.WaitUntilPlayed());
    CHECK(server.connections() == 2);
  }
}

TEST_CASE("a lone call whose wait for a connection used its deadline up asks nobody", "[lone_call]") {
  test::ScriptedServer server(test::MemcachedTextRequests(), {{"A\r\n"}});
  REQUIRE(server.port() > 0);
  auto pool = PoolOf({server.port()}, /*failure_limit=*/1, /*max_connections=*/1);
  {
    ServerPool::Lease held = pool->Acquire(0);  // the one connection the bound allows
    std::vector<Operation> ops = Gets({"a"});
    bool asked = false;
    const Status s = LoneGet(*pool, ops[0], Clock::now() + milliseconds(200), nullptr, &asked);
    INFO(s.ToString());
    CHECK(s.IsTimeout());
    CHECK(s.message().find("max_connections") != std::string_view::npos);
    CHECK(ops[0].status.IsTimeout());
    CHECK_FALSE(asked);
  }
  CHECK(pool->Available(0));
  std::vector<ServerHealth> health = HealthOf(*pool);
  CHECK(health[0].requests == 0);  // the server was asked nothing
  CHECK(health[0].pool_timeouts == 1);
  // A free connection, but a deadline already past: nothing is sent either.
  std::vector<Operation> late = Gets({"a"});
  bool asked = false;
  const Status s = LoneGet(*pool, late[0], Clock::now() - milliseconds(1), nullptr, &asked);
  INFO(s.ToString());
  CHECK(s.IsTimeout());
  CHECK(s.message().find("deadline passed before its request could be sent") !=
        std::string_view::npos);
  CHECK_FALSE(asked);
  health = HealthOf(*pool);
  CHECK(health[0].requests == 0);
  // With the connection back and time left, the next call goes through.
  std::vector<Operation> ops = Gets({"a"});
  CHECK(LoneGet(*pool, ops[0], pool->CallDeadline()).ok());
  CHECK(ops[0].result.value == "A");
  REQUIRE(server.WaitUntilPlayed());
  CHECK(server.connections() == 1);  // only the last call connected
}

TEST_CASE("RunOnEach asks every server at once but a resting one, outcomes in order",
          "[batch_runner]") {
  test::ScriptedServer a(test::MemcachedTextRequests(), {{"A\r\n"}});
  test::ScriptedServer b(test::MemcachedTextRequests(), {{"B\r\n"}});
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  const test::RefusingPort refusing;
  const int nobody = refusing.port();
  auto pool = PoolOf({a.port(), nobody, b.port()}, /*failure_limit=*/1);
  pool->ReportFailure(1);  // at its limit: resting for the whole test
  REQUIRE_FALSE(pool->Available(1));
  std::vector<Operation> ops = Gets({"a", "n", "b"});
  std::vector<LineBatch> lines(3);
  std::vector<ServerBatch*> batches;
  for (std::size_t i = 0; i < 3; ++i) {
    lines[i].Reset();
    lines[i].Add(ops[i]);
    batches.push_back(&lines[i]);
  }
  const std::vector<ServerRef> servers = {{pool.get(), 0}, {pool.get(), 1}, {pool.get(), 2}};
  const std::vector<Status> outcomes = RunOnEach(servers, batches, pool->CallDeadline());
  REQUIRE(outcomes.size() == 3);
  CHECK(outcomes[0].ok());
  INFO(outcomes[1].ToString());
  CHECK(outcomes[1].IsUnavailable());
  CHECK(outcomes[1].message().find("marked dead") != std::string_view::npos);
  CHECK(outcomes[2].ok());
  CHECK(ops[0].result.value == "A");
  CHECK(ops[2].result.value == "B");
  CHECK(lines[1].settled == 0);  // not asked, not settled
  CHECK(HealthOf(*pool)[1].requests == 0);
}

}  // namespace
}  // namespace cachet::net
