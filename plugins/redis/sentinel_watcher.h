// SentinelWatcher: hears from the sentinels when a master moves.
//
// One dedicated connection, on its own thread, to the first sentinel that
// accepts it (in configured order, then round again), subscribed to the
// `+switch-master` channel. Every message naming our master calls `on_switch`,
// which asks the sentinels again (SentinelRouter::Rediscover); so does every
// subscription after the first, since a switch may have happened while the
// link was down (or announced just before a close, which is not read). Silence
// past `health_interval` is checked with a PING; no answer within as long again
// and the link counts as lost (the link loop's health rule, background_link.h),
// and is opened again (with a backoff) until the watcher is destroyed. Destroying it wakes the
// thread and joins it: no callback runs after. In a forked child (which has
// no such thread) it only closes its pipe copy; the child still follows a
// failover through -READONLY and lost connections. The thread, its waits and
// the backoff are a BackgroundLink (background_link.h).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "background_link.h"
#include "cachet/net/connection.h"
#include "cachet/net/endpoint.h"
#include "redis_session.h"
#include "resp_parser.h"

namespace cachet::redis {

struct WatcherSettings {
  std::vector<net::ServerAddress> sentinels;
  std::string master;
  net::ConnectionOptions connection;
  SessionSettings session;  // the sentinels' credentials; resp is forced to 2
  std::chrono::milliseconds health_interval{1000};
};

// What a +switch-master subscription may carry, judged reply by reply: the
// subscribe confirmation, messages on that channel, and one ["pong", ""] per
// PING sent. Anything else is a protocol error, which drops the link.
class SwitchReader {
 public:
  SwitchReader(std::string master, std::string where)
      : master_(std::move(master)), where_(std::move(where)) {}
  void PingSent() noexcept { ++pongs_due_; }
  std::size_t pongs_due() const noexcept { return pongs_due_; }
  bool subscribed() const noexcept { return subscribed_; }
  // Accounts for `reply`; *switched is set when it announces a new address for
  // our master.
  Status Handle(RespValue reply, bool* switched);

 private:
  const std::string master_;
  const std::string where_;
  std::size_t pongs_due_ = 0;
  bool subscribed_ = false;
};

class SentinelWatcher {
 public:
  // How an attempt to subscribe on sentinel `index` (of settings.sentinels)
  // went: ok once subscribed, else why not. Runs on the thread.
  using OutcomeFn = std::function<void(std::size_t index, const Status& outcome)>;
  // Starts the thread. `on_switch` and `on_outcome` run on it.
  SentinelWatcher(WatcherSettings settings, std::function<void()> on_switch,
                  OutcomeFn on_outcome);
  ~SentinelWatcher();
  SentinelWatcher(const SentinelWatcher&) = delete;
  SentinelWatcher& operator=(const SentinelWatcher&) = delete;

  // True while a subscription is live (for tests).
  bool subscribed() const noexcept { return subscribed_.load(); }

 private:
  // The thread: subscriptions to one sentinel after another, in turn.
  void Run();
  // Subscribes on `sentinel`, has the master looked up again (a switch may have
  // been announced while no link was up), and listens until the link is lost.
  BackgroundLink::Attempt Watch(std::size_t index);
  Status Subscribe(net::Connection& connection, RespParser& parser, SwitchReader& reader);

  const WatcherSettings settings_;
  const RedisSession session_;
  const std::function<void()> on_switch_;
  const OutcomeFn on_outcome_;
  std::atomic<bool> subscribed_{false};
  BackgroundLink link_;  // last: its thread uses the members above
};

}  // namespace cachet::redis
