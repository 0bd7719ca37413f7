// The background links (invalidation_tracker.h, cluster_tracker.h,
// sentinel_watcher.h) against a scripted fake server: what arrives in the same
// write as the link's answer (CLIENT TRACKING's +OK, SUBSCRIBE's confirmation)
// is handled at once, not left in the buffer until the socket has more.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cachet/invalidation.h"
#include "cachet/net/connection.h"
#include "cluster_topology.h"
#include "cluster_tracker.h"
#include "invalidation_tracker.h"
#include "sentinel_watcher.h"
#include "support/scripted_server.h"

namespace cachet::redis {
namespace {

using cachet::test::ScriptedServer;
using std::chrono::milliseconds;

net::ServerAddress Loopback(int port) { return {"127.0.0.1", static_cast<std::uint16_t>(port), 1}; }

// HELLO 3's answer (a RESP3 map, shortened).
const std::string kHello = "%1\r\n$5\r\nproto\r\n:3\r\n";
// An "invalidate" push for one key, as Redis sends it under CLIENT TRACKING.
std::string Invalidate(const std::string& key) {
  return ">2\r\n$10\r\ninvalidate\r\n*1\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
}

// Records what a tracker tells the near cache; a test waits for it, bounded.
class Recorder final : public InvalidationListener {
 public:
  void OnInvalidate(std::span<const std::string_view> keys) noexcept override {
    const std::lock_guard lock(mutex_);
    for (const std::string_view key : keys) keys_.emplace_back(key);
    changed_.notify_all();
  }
  void OnInvalidateAll() noexcept override {}
  void OnTrackingLive(bool live) noexcept override {
    const std::lock_guard lock(mutex_);
    ++(live ? lives_ : downs_);
    changed_.notify_all();
  }
  // True once the link went down, waiting `patience` at most.
  bool WentDown(milliseconds patience) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, patience, [&] { return downs_ > 0; });
  }
  // True once `key` was invalidated, waiting `patience` at most.
  bool Heard(const std::string& key, milliseconds patience) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, patience, [&] {
      for (const std::string& heard : keys_) {
        if (heard == key) return true;
      }
      return false;
    });
  }
  int lives() {
    const std::lock_guard lock(mutex_);
    return lives_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> keys_;
  int lives_ = 0;
  int downs_ = 0;
};

// The health interval: long enough that no PING goes out during a test.
constexpr milliseconds kQuiet{60000};
// How long a test waits for what the link already received.
constexpr milliseconds kPatience{2000};

// The server's script: HELLO 3, then CLIENT TRACKING's +OK with an invalidation
// in the same write; a PING's answer stays unplayed, so the link stays open.
std::vector<cachet::test::ScriptStep> AnswerWithPush() {
  return {{kHello}, {"+OK\r\n" + Invalidate("k1")}, {"+PONG\r\n"}};
}

TEST_CASE("tracking link: an invalidation in the same write as the answer is heard",
          "[redis][near][link]") {
  ScriptedServer server(cachet::test::RespRequests(), AnswerWithPush());
  Recorder recorder;
  TrackerSettings settings;
  settings.servers = {Loopback(server.port())};
  settings.health_interval = kQuiet;
  InvalidationTracker tracker(settings, &recorder);
  CHECK(recorder.Heard("k1", kPatience));
}

TEST_CASE("tracking link: CLIENT TRACKING answered other than OK never goes live",
          "[redis][near][link]") {
  // A reply that does not say tracking is on: invalidations may never come.
  for (const std::string answer : {":1\r\n", "$-1\r\n", "+NOTOK\r\n", "*0\r\n"}) {
    CAPTURE(answer);
    ScriptedServer server(cachet::test::RespRequests(), {{kHello}, {answer}});
    Recorder recorder;
    TrackerSettings settings;
    settings.servers = {Loopback(server.port())};
    settings.health_interval = kQuiet;
    InvalidationTracker tracker(settings, &recorder);
    REQUIRE(server.WaitUntilPlayed());
    std::this_thread::sleep_for(milliseconds(200));
    CHECK(recorder.lives() == 0);
  }
}

TEST_CASE("tracking link: silent past the health interval it gets a PING, unanswered it is lost",
          "[redis][near][link]") {
  // The PING's answer comes 3 s late: the link is lost long before.
  ScriptedServer server(cachet::test::RespRequests(),
                        {{kHello}, {"+OK\r\n"}, {"", 0, {}, "+PONG\r\n", milliseconds(3000)}});
  Recorder recorder;
  TrackerSettings settings;
  settings.servers = {Loopback(server.port())};
  settings.health_interval = milliseconds(100);
  InvalidationTracker tracker(settings, &recorder);
  CHECK(recorder.WentDown(milliseconds(5000)));
  CHECK(recorder.lives() >= 1);
  REQUIRE(server.requests().size() >= 3);
  CHECK(server.requests()[2] == "*1\r\n$4\r\nPING\r\n");
}

TEST_CASE("cluster tracking link: an invalidation in the same write as the answer is heard",
          "[redis][near][link][cluster]") {
  ScriptedServer server(cachet::test::RespRequests(), AnswerWithPush());
  const RedisSession session(SessionSettings{});
  ClusterSettings cluster;
  cluster.seeds = {Loopback(server.port())};
  ClusterTopology topology(cluster, net::ServerPoolOptions{}, session);
  // The one primary, known without asking the fake server for a slot map.
  topology.Moved(0, ClusterNode{"127.0.0.1", server.port(), ""});
  Recorder recorder;
  ClusterTrackerSettings settings;
  settings.health_interval = kQuiet;
  ClusterTracker tracker(settings, &topology, &recorder);
  CHECK(recorder.Heard("k1", kPatience));
  CHECK(recorder.lives() >= 1);
}

// A sentinel's confirmation of SUBSCRIBE +switch-master, and a switch message.
const std::string kSwitchConfirm = "*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n";
std::string SwitchMessage() {
  const std::string text = "mymaster 127.0.0.1 6379 127.0.0.1 6390";
  return "*3\r\n$7\r\nmessage\r\n$14\r\n+switch-master\r\n$" + std::to_string(text.size()) +
         "\r\n" + text + "\r\n";
}

// True once a sentinel watcher of a fake sentinel playing `script` reported a
// switch, waiting kPatience at most.
bool HearsSwitch(std::vector<cachet::test::ScriptStep> script) {
  ScriptedServer server(cachet::test::RespRequests(), std::move(script));
  std::mutex mutex;
  std::condition_variable changed;
  int switches = 0;
  WatcherSettings settings;
  settings.sentinels = {Loopback(server.port())};
  settings.master = "mymaster";
  settings.health_interval = kQuiet;
  SentinelWatcher watcher(
      settings,
      [&] {
        const std::lock_guard lock(mutex);
        ++switches;
        changed.notify_all();
      },
      [](std::size_t, const Status&) {});
  std::unique_lock lock(mutex);
  return changed.wait_for(lock, kPatience, [&] { return switches > 0; });
}

TEST_CASE("sentinel link: a switch in the same write as the confirmation is heard",
          "[redis][sentinel][link]") {
  const std::string pong = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";
  CHECK(HearsSwitch({{kSwitchConfirm + SwitchMessage()}, {pong}}));
}

TEST_CASE("sentinel link: a switch announced just before the sentinel closes is heard",
          "[redis][sentinel][link]") {
  // The message comes later, and the sentinel hangs up right after it; no
  // second connection is served, so only the message can count as a switch.
  CHECK(HearsSwitch({{kSwitchConfirm, 0, {}, SwitchMessage(), milliseconds(200), true}}));
}

}  // namespace
}  // namespace cachet::redis
