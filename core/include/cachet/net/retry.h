// Retries: when the engine may send a call again, how often, and how far apart.
//
// A call is sent again only when it cannot run twice:
//   - nothing was sent: the connect, its TLS handshake or the store's login
//     failed, or the wait for a connection used the deadline up
//     (Exchange::sent false; BatchRunner::sent); the store may then route it
//     anew (a reloaded topology);
//   - the server answered that it did not run it, and where or when it will
//     (a store's own reply: Redis Cluster's MOVED, ASK, TRYAGAIN, CLUSTERDOWN).
// A failure after the request went out (a timeout, a dropped connection) is
// returned as it is: the command may have run. (The engine's one exception: a
// read answered by the close of a pooled connection alone goes once more,
// exchange.h's ClosedUnanswered.) Which of its failures are the
// second kind is the store's to say; the count and the pace are the engine's:
//
//   net::Attempts attempts(policy, deadline);
//   Status last;
//   while (attempts.Next()) {
//     Status s = TryOnce();
//     if (!MayGoAgain(s)) return s;
//     last = s;
//     if (!IsRedirect(s)) attempts.Wait();  // a redirect's new server is asked at once
//   }
//   return attempts.GiveUp("redis cluster: slot 42", last);
//
// Stores whose keys have one server (memcached, Tokyo Tyrant) do not retry:
// with failover a dead server's keys move once it is marked dead
// (ServerPool), not within a call.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "cachet/export.h"
#include "cachet/net/connection.h"
#include "cachet/status.h"

namespace cachet::net {

struct RetryPolicy {
  std::uint32_t attempts = 1;  // tries in all, the first included (0 counts as 1)
  // The wait before the second try; the n-th retry waits n times this, at most kMaxWaitFactor.
  std::chrono::milliseconds wait{0};
  static constexpr std::uint32_t kMaxWaitFactor = 10;

  std::uint32_t limit() const noexcept { return attempts == 0 ? 1 : attempts; }
};

// The attempts of one call: at most `policy.attempts`, each begun before the
// call's deadline (a real one: Deadline{} is long past, so no attempt begins).
// Not thread-safe: one per call.
class CACHET_EXPORT Attempts {
 public:
  Attempts(RetryPolicy policy, Deadline deadline) noexcept
      : policy_(policy), deadline_(deadline) {}

  // Begins the next attempt: false when the count is spent or the deadline
  // passed (an attempt begun then would fail at once, and count against a
  // healthy server).
  bool Next();
  // Sleeps before the next attempt: the policy's wait times the attempts made
  // so far (a short hiccup costs little, a long outage is bounded by the count
  // and the deadline), never past the deadline; none when no attempt is left.
  void Wait() const;
  // Attempts begun so far.
  std::uint32_t made() const noexcept { return made_; }
  // Why the call ends without an answer, after `last` (the last attempt's
  // failure): a timeout when the deadline passed, else unavailable ("gave up
  // after N attempts"). `what` names the call ("redis cluster: slot 42").
  Status GiveUp(std::string_view what, const Status& last) const;

 private:
  RetryPolicy policy_;
  Deadline deadline_;
  std::uint32_t made_ = 0;
};

}  // namespace cachet::net
