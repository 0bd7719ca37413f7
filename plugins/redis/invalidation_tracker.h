// InvalidationTracker: the Redis store's invalidations for the core's near
// cache (cachet/invalidation.h), standalone servers.
//
// One dedicated connection per server, on its own thread, in RESP3 (HELLO 3),
// with CLIENT TRACKING ON BCAST and a PREFIX per namespace: the server then
// pushes an "invalidate" message for every change to a key with one of those
// prefixes, by any client, and a null one for a flush. Broadcast mode keeps no
// state on the data connections, so the pooled connections need no setup and
// any of them may serve any read (docs/near-cache.md says why this mode).
//
// The listener hears OnTrackingLive(true) once every server's connection is
// tracking, and OnTrackingLive(false) as soon as one is lost: closed by the
// server (CLIENT KILL, a restart), or silent past a PING (the link loop's
// health rule, background_link.h). The lost connection
// is then opened again, with a backoff, until the tracker is destroyed.
// Destroying it wakes the threads and joins them: no callback runs after. In a
// forked child (which has none of the threads) it only closes its pipe copy
// (background_link.h holds the threads, their waits and the backoff).
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "background_link.h"
#include "cachet/invalidation.h"
#include "cachet/net/connection.h"
#include "cachet/net/endpoint.h"
#include "redis_session.h"
#include "resp_parser.h"

namespace cachet::redis {

// What every tracking link is made with, on standalone servers and a cluster.
struct TrackingLinkSettings {
  net::ConnectionOptions connection;
  SessionSettings session;            // resp is forced to 3
  std::vector<std::string> prefixes;  // empty: every key
  // Silence after which a link is checked with a PING; no answer in as long
  // again and it counts as lost (background_link.h). On a cluster, also how
  // often the slot map is checked.
  std::chrono::milliseconds health_interval{1000};
};

struct TrackerSettings : TrackingLinkSettings {
  std::vector<net::ServerAddress> servers;
};

// What a tracking link may carry, judged reply by reply: "invalidate" pushes
// (an array of string keys, or a null for a flush) and one PONG per PING sent.
// Anything else is an error, which closes the link and so drops the near
// cache: a reply that cannot be accounted for may hide a lost invalidation.
// The link loop (BackgroundLink::Listen) drives it.
class TrackingReader final : public LinkReader {
 public:
  // `where`: the server, for error messages.
  TrackingReader(InvalidationListener* listener, std::string where)
      : listener_(listener), where_(std::move(where)) {}
  void PingSent() noexcept override { ++pongs_due_; }
  std::size_t pongs_due() const noexcept override { return pongs_due_; }
  // Hands an invalidation to the listener or accounts for a PONG.
  Status Handle(RespValue reply) override;

 private:
  Status Invalidate(RespValue push);

  InvalidationListener* const listener_;
  const std::string where_;
  std::size_t pongs_due_ = 0;
};

// The tracking connection's session: RESP3, the client name suffixed "-tracking".
SessionSettings TrackingSession(SessionSettings session);

// Connects `connection`, sets it up with `session` and turns CLIENT TRACKING ON
// BCAST on, with a PREFIX per prefix; bounded by the connection's call timeout.
Status EstablishTracking(net::Connection& connection, RespParser& parser,
                         const RedisSession& session, const std::vector<std::string>& prefixes);

class InvalidationTracker final : public InvalidationSubscription {
 public:
  // `listener` must outlive this object. Starts one thread per server.
  InvalidationTracker(TrackerSettings settings, InvalidationListener* listener);
  ~InvalidationTracker() override;

 private:
  // Opens one tracking connection to `server` and listens on it until it is
  // lost; its thread calls it again and again.
  BackgroundLink::Attempt Track(std::size_t server);
  void ServerUp();
  void ServerDown();

  const TrackerSettings settings_;
  const RedisSession session_;
  InvalidationListener* const listener_;
  std::mutex live_mutex_;
  std::size_t live_servers_ = 0;  // guarded by live_mutex_
  BackgroundLink link_;           // last: its threads use the members above
};

}  // namespace cachet::redis
