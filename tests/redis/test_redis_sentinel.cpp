// Redis Sentinel mode against real servers: a master, its replica and three
// sentinels (launchers/redis_sentinel.h) on loopback ports. Operations through
// the master the sentinels name; the master killed under a writer (writes are
// unavailable during the failover, then continue on the new master with
// nothing acknowledged lost); a manual failover followed through -READONLY and
// lost connections alone; reads from the replica; a wrong master name, no
// sentinel, and the sentinels' password.
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis_backend.h"
#include "sentinel_router.h"
#include "launchers/redis_sentinel.h"
#include "support/scripted_server.h"
#include "support/waits.h"

using cachet::Item;
using cachet::ItemView;
using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::StoreMode;
using cachet::redis::RedisBackend;
using cachet::redis::RedisMode;
using cachet::redis::RedisOptions;
using cachet::redis::SentinelRouter;
using cachet::test::RedisSentinelSet;
using cachet::test::SentinelSetOptions;
using Clock = std::chrono::steady_clock;

namespace {

// Long enough that a loaded machine's stall is no timeout: the in-flight write
// must end with the kill of its stopped master, not time out before it.
constexpr auto kIoTimeout = std::chrono::milliseconds(2000);

std::uint16_t Port(const cachet::test::ServerProcess& server) {
  return static_cast<std::uint16_t>(server.port());
}

RedisOptions SentinelOptions(const std::vector<std::uint16_t>& sentinel_ports,
                             const std::string& master) {
  RedisOptions options;
  options.mode = RedisMode::kSentinel;
  for (std::uint16_t port : sentinel_ports) options.servers.push_back({"127.0.0.1", port, 1});
  options.pool.connection.io_timeout = kIoTimeout;
  options.sentinel.master = master;
  return options;
}

RedisOptions SentinelOptions(const RedisSentinelSet& set) {
  std::vector<std::uint16_t> ports;
  for (const auto& sentinel : set.sentinels()) ports.push_back(Port(*sentinel));
  return SentinelOptions(ports, set.master_name());
}

SentinelRouter& RouterOf(RedisBackend& backend) {
  return dynamic_cast<SentinelRouter&>(backend.router());
}

std::unique_ptr<RedisSentinelSet> StartSet(SentinelSetOptions options = {}) {
  auto set = RedisSentinelSet::Start(std::move(options));
  INFO((set.ok() ? std::string() : set.status().ToString()));
  REQUIRE(set.ok());
  return std::move(set).value();
}

// Polls `done` every 20 ms until it holds or `limit` passes; whether it held.
template <class Done>
bool WaitFor(std::chrono::milliseconds limit, Done done) {
  return cachet::test::WaitUntil(done, limit, std::chrono::milliseconds(20));
}

// stdout and stderr of a shell command.
std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char chunk[4096];
  for (std::size_t n; (n = fread(chunk, 1, sizeof chunk, pipe)) > 0;) out.append(chunk, n);
  pclose(pipe);
  return out;
}

bool Named(const std::vector<cachet::ServerHealth>& health, const std::string& where) {
  for (const auto& server : health) {
    if (server.server == where) return true;
  }
  return false;
}

// One write of a writer loop and how it ended.
struct Write {
  std::string key;
  std::string value;
  Status status;
  Clock::time_point at;
};

// A log sink that, for each message, asks `probe` from another thread and
// counts the answers not back within a second: while cachet logs, the lock
// every call takes must be free.
class ProbingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::function<std::string()> probe;
  int messages = 0;
  int blocked = 0;
  // Kept until the test clears them: a future's destructor waits for its thread.
  std::vector<std::future<std::string>> pending;

 protected:
  void sink_it_(const spdlog::details::log_msg&) override {
    ++messages;
    if (!probe) return;
    pending.push_back(std::async(std::launch::async, probe));
    if (pending.back().wait_for(std::chrono::seconds(1)) != std::future_status::ready) ++blocked;
  }
  void flush_() override {}
};

}  // namespace

TEST_CASE("sentinel mode serves every operation on the master the sentinels name",
          "[redis][sentinel]") {
  auto set = StartSet();
  RedisBackend backend(SentinelOptions(*set));
  REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  Item item;
  REQUIRE(backend.Get("k", &item).ok());
  CHECK(item.value == "v");
  CHECK(RouterOf(backend).MasterWhere() == set->master().address());
  // It is the master's own copy, not a guess.
  CHECK(RedisSentinelSet::Cli(set->master().port(), "get k") == "v");
  std::uint64_t counter = 0;
  REQUIRE(backend.Incr("n", 5, &counter).ok());
  CHECK(counter == 5);
  CHECK(backend.Get("missing", &item).IsNotFound());

  std::vector<Operation> batch(3);
  batch[0].kind = OpKind::kStore;
  batch[0].key = "b";
  batch[0].item = ItemView("bv");
  batch[1].key = "k";
  batch[2].key = "missing";
  backend.Execute(batch);
  CHECK(batch[0].status.ok());
  CHECK(batch[1].status.ok());
  CHECK(batch[1].result.value == "v");
  CHECK(batch[2].status.IsNotFound());

  std::vector<cachet::ServerHealth> health;
  REQUIRE(backend.Health(&health).ok());
  CHECK(Named(health, set->master().address()));
  CHECK(Named(health, set->sentinels().front()->address()));

  // Through the CLI and the plugin's options.
  const std::string cli = CACHET_BINARY_DIR
                          "/bin/cachet -o cache.backend=redis -o redis.mode=sentinel"
                          " -o redis.servers=" +
                          set->SentinelList() + " -o redis.sentinel_master=" + set->master_name();
  CHECK(Run(cli + " set cli-key cli-value").find("error") == std::string::npos);
  CHECK(Run(cli + " get cli-key").find("cli-value") != std::string::npos);
  CHECK(RedisSentinelSet::Cli(set->master().port(), "get cli-key") == "cli-value");
}

TEST_CASE("the master killed under a writer: unavailable during the failover, then the new master",
          "[redis][sentinel][failover]") {
  auto set = StartSet();
  REQUIRE(set->WaitUntilAcquainted().ok());  // a failover needs the sentinels to know each other
  RedisBackend writer(SentinelOptions(*set));
  // A second backend makes one call, then stays idle: only +switch-master can move it.
  RedisBackend idle(SentinelOptions(*set));
  Item item;
  CHECK(idle.Get("nothing", &item).IsNotFound());
  REQUIRE(WaitFor(std::chrono::seconds(3), [&] { return RouterOf(idle).Watching(); }));

  constexpr int kBeforeKill = 50;
  constexpr int kAfterSwitch = 200;
  constexpr int kMaxWrites = 10000;  // at 2 ms apart, 20 s: far longer than a failover
  // Failed writes take up to a call's timeout each: the loop is bounded in time too.
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(40);
  std::vector<Write> writes;
  writes.reserve(kMaxWrites);
  Clock::time_point killed_at{};
  int first_after_switch = -1;  // index of the first write acknowledged after the kill
  for (int i = 0; i < kMaxWrites && Clock::now() < give_up; ++i) {
    Write w{"w:" + std::to_string(i), "value-" + std::to_string(i), Status(), Clock::now()};
    w.status = writer.Store(StoreMode::kSet, w.key, ItemView(w.value), {});
    w.at = Clock::now();
    writes.push_back(w);
    if (i + 1 == kBeforeKill) {
      REQUIRE(writes.back().status.ok());
      // Replication is asynchronous: a write the replica has not received when
      // the master dies is lost, whoever the client. WAIT makes the writes
      // acknowledged so far reach the replica, so they must all read back.
      REQUIRE(RedisSentinelSet::Cli(set->master().port(), "wait 1 5000") == "1");
      // One write is in flight when the master dies: it is sent to a stopped
      // master, which is then killed. It may have run, so it is an error, and
      // it is not sent again.
      REQUIRE(set->master().Pause().ok());
      Status in_flight;
      std::thread stalled(
          [&] { in_flight = writer.Store(StoreMode::kSet, "in-flight", ItemView("x"), {}); });
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      // No REQUIRE while the thread runs: a failed one would end the test with
      // the thread joinable (std::terminate). The write ends within its timeout.
      const Status killed = set->master().Kill();
      killed_at = Clock::now();
      stalled.join();
      REQUIRE(killed.ok());
      INFO(in_flight.ToString());
      CHECK(in_flight.IsIoError());
    }
    if (killed_at != Clock::time_point{} && i >= kBeforeKill && w.status.ok() &&
        first_after_switch < 0) {
      first_after_switch = i;
    }
    if (first_after_switch >= 0 && i - first_after_switch >= kAfterSwitch) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(first_after_switch > kBeforeKill);

  // Writes before the kill were all acknowledged (by the old master).
  for (int i = 0; i < kBeforeKill; ++i) CHECK(writes[i].status.ok());
  // During the failover: unavailable, bar the one write that may have been in
  // flight when the master died (an I/O error: it may or may not have run).
  int unavailable = 0, in_flight = 0;
  for (int i = kBeforeKill; i < first_after_switch; ++i) {
    const Status& s = writes[i].status;
    INFO("write " << i << ": " << s.ToString());
    CHECK(s.IsError());
    if (s.IsUnavailable()) {
      ++unavailable;
    } else {
      ++in_flight;
      CHECK((s.IsIoError() || s.IsTimeout()));
    }
  }
  CHECK(in_flight <= 1);
  // After the switch every write is acknowledged, on the new master.
  for (std::size_t i = first_after_switch; i < writes.size(); ++i) {
    INFO("write " << i << ": " << writes[i].status.ToString());
    CHECK(writes[i].status.ok());
  }
  CHECK(RouterOf(writer).MasterWhere() == set->replica().address());
  REQUIRE(set->WaitForMasterPort(set->replica().port()).ok());

  // Nothing acknowledged is lost: the writes before the kill (replicated, see
  // WAIT above) and after the switch each read back as written.
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (i >= static_cast<std::size_t>(kBeforeKill) &&
        i < static_cast<std::size_t>(first_after_switch)) {
      continue;
    }
    Item back;
    INFO(writes[i].key);
    REQUIRE(writer.Get(writes[i].key, &back).ok());
    CHECK(back.value == writes[i].value);
  }
  // The write in flight reached only the stopped master, killed before it ran
  // it: the new master never saw it (and cachet did not send it again).
  CHECK(writer.Get("in-flight", &item).IsNotFound());
  // The idle backend followed through +switch-master alone.
  CHECK(WaitFor(std::chrono::seconds(5),
                [&] { return RouterOf(idle).MasterWhere() == set->replica().address(); }));
  REQUIRE(idle.Get(writes.back().key, &item).ok());
  CHECK(item.value == writes.back().value);

  const auto window = std::chrono::duration_cast<std::chrono::milliseconds>(
      writes[first_after_switch].at - killed_at);
  std::cout << "sentinel failover: writes unavailable for " << window.count()
            << " ms after the kill (" << unavailable << " unavailable, " << in_flight
            << " in flight, " << writes.size() - first_after_switch
            << " acknowledged after the switch, all read back)" << std::endl;
}

TEST_CASE("a manual failover is followed through -READONLY and lost connections alone",
          "[redis][sentinel][failover]") {
  auto set = StartSet();
  RedisOptions options = SentinelOptions(*set);
  options.sentinel.watch = false;  // no +switch-master: only failing calls can tell
  RedisBackend backend(options);
  RedisBackend batches(std::move(options));  // the same, for a batch
  REQUIRE(backend.Store(StoreMode::kSet, "before", ItemView("1"), {}).ok());
  Item item;
  REQUIRE(batches.Get("before", &item).ok());
  REQUIRE(set->SentinelCli(*set->sentinels().front(), "sentinel failover " + set->master_name()) ==
          "OK");
  REQUIRE(set->WaitForMasterPort(set->replica().port()).ok());
  // The sentinels turn the old master into a replica only some seconds later
  // (until then it still takes writes: Redis' own window, which +switch-master
  // closes for cachet). The test does at once what they will do.
  REQUIRE(RedisSentinelSet::Cli(set->master().port(),
                                "replicaof 127.0.0.1 " + std::to_string(set->replica().port())) ==
          "OK");
  // Until cachet asks again, writes reach the old master and are refused
  // (-READONLY), or find their connection closed by the reconfiguration.
  // Nothing told the backend yet: it still has the old master.
  CHECK(RouterOf(backend).MasterWhere() == set->master().address());
  Status s;
  int failures = 0;
  for (int i = 0; i < 200; ++i) {  // 200 x 20 ms at most
    s = backend.Store(StoreMode::kSet, "after", ItemView("2"), {});
    if (s.ok()) break;
    INFO(s.ToString());
    CHECK((s.IsUnavailable() || s.IsIoError()));
    CHECK((s.message().find("READONLY") == std::string_view::npos || s.IsUnavailable()));
    ++failures;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(s.ok());
  CHECK(failures <= 2);
  CHECK(RouterOf(backend).MasterWhere() == set->replica().address());
  CHECK(RedisSentinelSet::Cli(set->replica().port(), "get after") == "2");
  // The old master did refuse a write with READONLY.
  CHECK(RedisSentinelSet::Cli(set->master().port(), "info errorstats").find("errorstat_READONLY") !=
        std::string::npos);

  // A batch refused by the old master goes to the new one: the writes it never ran.
  CHECK(RouterOf(batches).MasterWhere() == set->master().address());
  std::vector<Operation> writes(3);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    writes[i].kind = OpKind::kStore;
    writes[i].key = i == 0 ? "b0" : i == 1 ? "b1" : "b2";
    writes[i].item = ItemView("bv");
  }
  const std::string refused_before = RedisSentinelSet::Cli(set->master().port(), "info errorstats");
  batches.Execute(writes);
  // Refused with -READONLY, the writes never ran: they were sent again to the
  // new master, and succeeded there.
  for (const Operation& op : writes) {
    INFO(op.status.ToString());
    REQUIRE(op.status.ok());
  }
  CHECK(RedisSentinelSet::Cli(set->master().port(), "info errorstats") != refused_before);
  CHECK(RedisSentinelSet::Cli(set->replica().port(), "get b0") == "bv");
  CHECK(RouterOf(batches).MasterWhere() == set->replica().address());
  batches.Execute(writes);
  for (const Operation& op : writes) {
    INFO(op.status.ToString());
    CHECK(op.status.ok());
  }
  CHECK(RedisSentinelSet::Cli(set->replica().port(), "get b2") == "bv");
}

TEST_CASE("a master gone dark: the call that times out on it asks the sentinels",
          "[redis][sentinel][failover]") {
  auto set = StartSet();
  REQUIRE(set->WaitUntilAcquainted().ok());  // a failover needs the sentinels to know each other
  RedisOptions options = SentinelOptions(*set);
  options.sentinel.watch = false;  // no +switch-master: only failing calls can tell
  // The whole call is one wait: a timeout uses up all of the call's time.
  options.pool.connection.request_timeout = kIoTimeout;
  RedisBackend backend(std::move(options));
  REQUIRE(backend.Store(StoreMode::kSet, "before", ItemView("1"), {}).ok());
  REQUIRE(WaitFor(std::chrono::seconds(3), [&] {
    return RedisSentinelSet::Cli(set->replica().port(), "get before") == "1";
  }));
  // Stopped, the master keeps its connections open but answers nothing: calls
  // on it time out, using up their whole timeout.
  REQUIRE(set->master().Pause().ok());
  REQUIRE(set->WaitForMasterPort(set->replica().port()).ok());
  CHECK(RouterOf(backend).MasterWhere() == set->master().address());
  Item item;
  const Status dark = backend.Get("before", &item);
  INFO(dark.ToString());
  CHECK(dark.IsTimeout());
  // That one call asked the sentinels (in time of its own) and took the new master.
  CHECK(RouterOf(backend).MasterWhere() == set->replica().address());
  REQUIRE(backend.Get("before", &item).ok());
  CHECK(item.value == "1");
}

namespace {

// A fake first sentinel with a stale view names 127.0.0.1:`port`, whatever it is
// asked, before the set's own sentinels: a write must reach the set's master,
// with the fake asked once.
void StaleFirstSentinelPassedOver(RedisSentinelSet& set, int port) {
  const std::string text = std::to_string(port);
  const std::string names = "*2\r\n$9\r\n127.0.0.1\r\n$" + std::to_string(text.size()) +
                            "\r\n" + text + "\r\n";
  cachet::test::ScriptedServer stale(cachet::test::RespRequests(), {{names}, {names}, {names}});
  std::vector<std::uint16_t> ports{static_cast<std::uint16_t>(stale.port())};
  for (const auto& sentinel : set.sentinels()) ports.push_back(Port(*sentinel));
  RedisOptions options = SentinelOptions(ports, set.master_name());
  options.sentinel.watch = false;  // the fake answers no subscription
  RedisBackend backend(std::move(options));
  const Status s = backend.Store(StoreMode::kSet, "k", ItemView("v"), {});
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(RouterOf(backend).MasterWhere() == set.master().address());
  CHECK(stale.requests().size() == 1);
  CHECK(RedisSentinelSet::Cli(set.master().port(), "get k") == "v");
}

}  // namespace

// With every sentinel gone nothing asks them but the watcher: its failed
// subscriptions mark them dead (cachet_server_up 0, a warning each), and one
// that answers again is up again.
TEST_CASE("the watcher's link reports the sentinels' health", "[redis][sentinel]") {
  auto set = StartSet();
  RedisBackend backend(SentinelOptions(*set));  // watching, failure_limit 2
  REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(WaitFor(std::chrono::seconds(5), [&] { return RouterOf(backend).Watching(); }));
  auto sentinel_states = [&] {
    std::vector<cachet::ServerHealth> health;
    REQUIRE(backend.Health(&health).ok());
    std::vector<bool> dead;
    for (const auto& sentinel : set->sentinels()) {
      for (const auto& server : health) {
        if (server.server == sentinel->address()) dead.push_back(server.dead);
      }
    }
    return dead;
  };
  CHECK(sentinel_states() == std::vector<bool>(set->sentinels().size(), false));
  for (const auto& sentinel : set->sentinels()) REQUIRE(sentinel->Kill().ok());
  const std::vector<bool> all_dead(set->sentinels().size(), true);
  CHECK(WaitFor(std::chrono::seconds(10), [&] { return sentinel_states() == all_dead; }));
  // The master still serves: calls do not need the sentinels.
  CHECK(backend.Store(StoreMode::kSet, "k", ItemView("w"), {}).ok());
  REQUIRE(set->sentinels().front()->Restart().ok());
  CHECK(WaitFor(std::chrono::seconds(10), [&] { return !sentinel_states().front(); }));
}

TEST_CASE("a sentinel naming a node that is no master: the next sentinel is asked",
          "[redis][sentinel]") {
  auto set = StartSet();
  // The replica answers ROLE: slave, which sends cachet on.
  StaleFirstSentinelPassedOver(*set, set->replica().port());
}

TEST_CASE("a sentinel naming a master that does not answer: the next sentinel is asked",
          "[redis][sentinel]") {
  auto set = StartSet();
  // A master that is gone: a port that refuses every connection.
  const cachet::test::RefusingPort gone;
  StaleFirstSentinelPassedOver(*set, gone.port());
}

TEST_CASE("a switch heard while the sentinels are being asked makes cachet ask them again",
          "[redis][sentinel]") {
  // Fakes: the sentinel names M1, then (after its failover) M2; M1's ROLE is slow
  // enough for the switch to be heard while the first discovery waits for it.
  const std::string role_master = "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n";
  cachet::test::ScriptedServer m1(cachet::test::RespRequests(),
                                  {{role_master, role_master.size() / 2 + 1,
                                    std::chrono::milliseconds(600)}});
  cachet::test::ScriptedServer m2(cachet::test::RespRequests(), {{role_master}});
  const auto names = [](const cachet::test::ScriptedServer& master) {
    const std::string port = std::to_string(master.port());
    return "*2\r\n$9\r\n127.0.0.1\r\n$" + std::to_string(port.size()) + "\r\n" + port + "\r\n";
  };
  cachet::test::ScriptedServer sentinel(cachet::test::RespRequests(), {{names(m1)}, {names(m2)}});
  RedisOptions options =
      SentinelOptions({static_cast<std::uint16_t>(sentinel.port())}, "mymaster");
  options.sentinel.watch = false;  // the watcher's call is made below, at a chosen moment
  options.pool.connection.io_timeout = std::chrono::seconds(2);
  RedisBackend backend(std::move(options));
  const auto deadline = [] { return Clock::now() + std::chrono::seconds(5); };
  Status first;
  std::thread discovering([&] { first = RouterOf(backend).Rediscover(deadline(), true); });
  // The switch is heard 200 ms into M1's slow ROLE: the watcher asks, forced.
  REQUIRE(WaitFor(std::chrono::seconds(5), [&] { return m1.requests().size() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const Status after_switch = RouterOf(backend).Rediscover(deadline(), true);
  discovering.join();
  CHECK(first.ok());
  INFO(after_switch.ToString());
  CHECK(after_switch.ok());
  // Taking the first discovery's answer (M1, heard before the switch) would
  // leave every call on the old master with nothing left to fail.
  CHECK(sentinel.requests().size() == 2);
  CHECK(RouterOf(backend).MasterWhere() == "127.0.0.1:" + std::to_string(m2.port()));
}

TEST_CASE("a master switch is logged with the routing lock free", "[redis][sentinel]") {
  auto set = StartSet();
  auto sink = std::make_shared<ProbingSink>();
  RedisOptions options = SentinelOptions(*set);
  options.sentinel.watch = false;
  options.sentinel.logger = std::make_shared<spdlog::logger>("sentinel-test", sink);
  options.sentinel.logger->set_level(spdlog::level::debug);  // the first discovery's line
  RedisBackend backend(std::move(options));
  sink->probe = [&backend] { return RouterOf(backend).MasterWhere(); };
  REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  for (auto& answer : sink->pending) CHECK(answer.get() == set->master().address());
  sink->pending.clear();
  CHECK(sink->messages == 1);  // "master 'cachet-master' is at ..."
  CHECK(sink->blocked == 0);
}

TEST_CASE("a child forked while the parent asks the sentinels asks them on its own",
          "[redis][sentinel][fork]") {
  auto set = StartSet();
  RedisOptions options = SentinelOptions(*set);
  options.sentinel.watch = false;
  // A stalled first sentinel keeps a discovery (and its lock) busy for 1.5 s.
  options.pool.connection.io_timeout = std::chrono::milliseconds(1500);
  RedisBackend backend(std::move(options));
  REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(set->sentinels().front()->Pause().ok());
  Status parent_found;
  std::thread asking([&] {
    parent_found = RouterOf(backend).Rediscover(Clock::now() + std::chrono::seconds(5), true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it waits on the stalled one
  const pid_t child = fork();
  if (child == 0) {
    // Only this thread goes on here. The parent's discovery is not this
    // process's: the child asks the sentinels itself (the stalled one, then the next).
    const Status found = RouterOf(backend).Rediscover(Clock::now() + std::chrono::seconds(5), true);
    Item item;
    const bool read = found.ok() && backend.Get("k", &item).ok() && item.value == "v";
    _exit(read ? 0 : found.IsTimeout() ? 2 : 3);
  }
  asking.join();
  REQUIRE(child > 0);
  int status = -1;
  const bool ended =
      WaitFor(std::chrono::seconds(15), [&] { return waitpid(child, &status, WNOHANG) == child; });
  if (!ended) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  CHECK(ended);
  CHECK(parent_found.ok());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 2: the child found the parent's lock held
}

TEST_CASE("read_from = replica reads from the replica, and from the master when it is gone",
          "[redis][sentinel]") {
  auto set = StartSet();
  RedisOptions options = SentinelOptions(*set);
  options.sentinel.read_from_replica = true;
  RedisBackend backend(std::move(options));
  REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE(WaitFor(std::chrono::seconds(3),
                  [&] { return RedisSentinelSet::Cli(set->replica().port(), "get k") == "v"; }));
  CHECK(RouterOf(backend).ReplicaWhere() == set->replica().address());
  const std::string replica_get_calls = "cmdstat_get:calls=";
  auto replica_gets = [&] {
    std::string stats = RedisSentinelSet::Cli(set->replica().port(), "info commandstats");
    std::size_t at = stats.find(replica_get_calls);
    return at == std::string::npos ? 0 : std::stoi(stats.substr(at + replica_get_calls.size()));
  };
  const int before = replica_gets();
  Item item;
  REQUIRE(backend.Get("k", &item).ok());
  CHECK(item.value == "v");
  CHECK(replica_gets() == before + 1);
  std::vector<Operation> reads(2);
  reads[0].key = "k";
  reads[1].key = "missing";
  backend.Execute(reads);
  CHECK(reads[0].status.ok());
  CHECK(reads[0].result.value == "v");
  CHECK(reads[1].status.IsNotFound());
  // A read for a CAS token is the master's, single or batched: the cas compares there.
  const int before_gets = replica_gets();
  REQUIRE(backend.Gets("k", &item).ok());
  CHECK(item.cas != 0);
  std::vector<Operation> token_reads(1);
  token_reads[0].key = "k";
  token_reads[0].want_cas = true;
  backend.Execute(token_reads);
  CHECK(token_reads[0].status.ok());
  CHECK(token_reads[0].result.cas == item.cas);
  CHECK(replica_gets() == before_gets);

  REQUIRE(set->replica().Kill().ok());
  REQUIRE(backend.Get("k", &item).ok());  // the master answers
  CHECK(item.value == "v");
  backend.Execute(reads);
  CHECK(reads[0].status.ok());
  CHECK(reads[0].result.value == "v");
  CHECK(reads[1].status.IsNotFound());
}

// The sentinels list a replica by what they last heard of it; the node itself
// is asked ROLE before reads go there. One cut off and written to (REPLICAOF NO
// ONE, then a SET) holds values the master never had: it is passed over.
TEST_CASE("read_from = replica passes over a listed replica that is a master now",
          "[redis][sentinel]") {
  auto set = StartSet();
  {
    RedisBackend writer(SentinelOptions(*set));
    REQUIRE(writer.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  }
  REQUIRE(WaitFor(std::chrono::seconds(3),
                  [&] { return RedisSentinelSet::Cli(set->replica().port(), "get k") == "v"; }));
  REQUIRE(RedisSentinelSet::Cli(set->replica().port(), "replicaof no one") == "OK");
  REQUIRE(RedisSentinelSet::Cli(set->replica().port(), "set k rogue") == "OK");
  RedisOptions options = SentinelOptions(*set);
  options.sentinel.read_from_replica = true;
  RedisBackend backend(std::move(options));
  Item item;
  REQUIRE(backend.Get("k", &item).ok());
  CHECK(item.value == "v");
  CHECK(RouterOf(backend).ReplicaWhere().empty());
}

TEST_CASE("a wrong master name, no sentinel, and a dead first sentinel",
          "[redis][sentinel][errors]") {
  auto set = StartSet();
  Item item;
  {
    RedisOptions options = SentinelOptions(*set);
    options.sentinel.master = "no-such-master";
    RedisBackend backend(std::move(options));
    Status s = backend.Get("k", &item);
    INFO(s.ToString());
    CHECK(s.IsConfigError());
    CHECK(s.message().find("no-such-master") != std::string_view::npos);
    CHECK(s.message().find("sentinel_master") != std::string_view::npos);
    CHECK(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).IsError());
  }
  {
    // Nothing listens on these ports.
    const cachet::test::RefusingPort refusing_a, refusing_b;
    const auto a = static_cast<std::uint16_t>(refusing_a.port());
    const auto b = static_cast<std::uint16_t>(refusing_b.port());
    RedisBackend backend(SentinelOptions({a, b}, set->master_name()));
    Status s = backend.Get("k", &item);
    INFO(s.ToString());
    CHECK(s.IsUnavailable());
    CHECK(s.message().find("127.0.0.1:" + std::to_string(a)) != std::string_view::npos);
    CHECK(s.message().find("127.0.0.1:" + std::to_string(b)) != std::string_view::npos);
  }
  {
    // The first sentinel listed is down: the next one answers.
    const cachet::test::RefusingPort refusing;
    const auto dead = static_cast<std::uint16_t>(refusing.port());
    std::vector<std::uint16_t> ports = {dead};
    for (const auto& sentinel : set->sentinels()) ports.push_back(Port(*sentinel));
    RedisBackend backend(SentinelOptions(ports, set->master_name()));
    REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
    REQUIRE(backend.Get("k", &item).ok());
    CHECK(item.value == "v");
  }
}

TEST_CASE("a sentinel taken for a data node and the reverse are unsupported and say so",
          "[redis][sentinel][errors]") {
  auto set = StartSet();
  Item item;
  {
    RedisOptions options;
    options.servers.push_back({"127.0.0.1", Port(*set->sentinels().front()), 1});
    options.pool.connection.io_timeout = kIoTimeout;
    RedisBackend backend(std::move(options));
    Status s = backend.Get("k", &item);
    INFO(s.ToString());
    CHECK(s.IsUnsupported());
    CHECK(s.message().find("unknown command 'GET'") != std::string_view::npos);
    CHECK(s.message().find("a sentinel where `mode` expects a data node") !=
          std::string_view::npos);
    // The sentinel answered: it is up, and asked again.
    CHECK(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).IsUnsupported());
  }
  {
    RedisBackend backend(SentinelOptions({Port(set->master())}, set->master_name()));
    Status s = backend.Get("k", &item);
    INFO(s.ToString());
    CHECK(s.IsUnavailable());
    CHECK(s.message().find("unknown command 'SENTINEL'") != std::string_view::npos);
    CHECK(s.message().find("or the reverse") != std::string_view::npos);
  }
}

TEST_CASE("the sentinels' password: the right one works, a wrong one is auth_failed, never shown",
          "[redis][sentinel][security]") {
  const std::string password = "s3ntinel-Right-77";
  const std::string secret = "wrong-Sentinel-4242";
  SentinelSetOptions options;
  options.sentinel_password = password;
  auto set = StartSet(options);
  Item item;
  {
    RedisOptions right = SentinelOptions(*set);
    right.sentinel.session.password = password;
    RedisBackend backend(std::move(right));
    REQUIRE(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
    REQUIRE(backend.Get("k", &item).ok());
    CHECK(item.value == "v");
    REQUIRE(WaitFor(std::chrono::seconds(3), [&] { return RouterOf(backend).Watching(); }));
  }
  {
    RedisOptions wrong = SentinelOptions(*set);
    wrong.sentinel.session.password = secret;
    RedisBackend backend(std::move(wrong));
    Status s = backend.Get("k", &item);
    INFO(s.ToString());
    CHECK(s.IsAuthFailed());
    CHECK(s.message().find("sentinel_password") != std::string_view::npos);
    CHECK(s.ToString().find(secret) == std::string::npos);
  }

  // The CLI: `check` masks the password, a failing `get` does not show it, and
  // a missing sentinel_master is named.
  const std::string config_path = CACHET_BINARY_DIR "/redis-sentinel-secret.conf";
  {
    std::ofstream config(config_path);
    config << "[cache]\nbackend = redis\nlog_level = trace\n[redis]\nmode = sentinel\nservers = "
           << set->SentinelList() << "\nsentinel_master = " << set->master_name()
           << "\nsentinel_password = " << secret << "\n";
  }
  const std::string cli = CACHET_BINARY_DIR "/bin/cachet -c " + config_path;
  const std::string check = Run(cli + " check");
  CHECK(check.find("sentinel_password") != std::string::npos);
  CHECK(check.find(secret) == std::string::npos);
  const std::string get = Run(cli + " get k");
  CHECK(get.find("auth") != std::string::npos);
  CHECK(get.find(secret) == std::string::npos);
  const std::string unnamed = Run(cli + " -o redis.sentinel_master= check");
  CHECK(unnamed.find("sentinel_master") != std::string::npos);
  CHECK(unnamed.find("required") != std::string::npos);
  // A secret option refused outside sentinel mode is named, its value masked.
  const std::string refused =
      Run(cli + " -o redis.mode=standalone -o redis.sentinel_master= check");
  CHECK(refused.find("sentinel_password") != std::string::npos);
  CHECK(refused.find("needs mode = sentinel") != std::string::npos);
  CHECK(refused.find(secret) == std::string::npos);
  std::remove(config_path.c_str());
}
