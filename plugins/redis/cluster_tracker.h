// ClusterTracker: the Redis store's invalidations for the core's near cache
// (cachet/invalidation.h) on a Redis Cluster.
//
// One RESP3 connection per primary, with CLIENT TRACKING ON BCAST and a PREFIX
// per namespace, as on standalone servers (invalidation_tracker.h): in
// broadcast mode each primary reports every change to the keys it holds, by
// any client, so the links together cover every slot. One thread reads them all.
//
// The listener hears OnTrackingLive(true) once every primary of the slot map
// has a tracking link and the map has not changed meanwhile, and
// OnTrackingLive(false) as soon as any of these happens:
//   - the topology changes (ClusterTopology's change hook): a MOVED that points
//     a slot elsewhere or an ASK, seen by the data path, or a reload of the slot
//     map that finds another owner for a slot. The hook runs on the thread that
//     saw the change, so the near cache is dropped before that thread (or any
//     other, later) reads from it again;
//   - a tracking link fails: closed by its node, silent past a PING, or an
//     unexpected reply.
// Then the links are made to match the new primaries (kept where the node is
// still a primary, opened where it is new, closed where it no longer is) and
// the listener hears true again. Every health interval the thread also asks
// for a reload of the slot map (ClusterTopology::Refresh, at most once per
// cluster_refresh_interval_ms), so a failover or a new primary is found even
// when the data path sees no redirect.
//
// Destroying the tracker removes the hook, wakes the thread and joins it: no
// callback runs after. The topology must outlive the tracker. The thread, its
// waits, the nudge and the backoff are a BackgroundLink (background_link.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "background_link.h"
#include "cachet/invalidation.h"
#include "cachet/net/connection.h"
#include "cluster_topology.h"
#include "invalidation_tracker.h"
#include "redis_session.h"

namespace cachet::redis {

// One link per primary, each made as on a standalone server.
using ClusterTrackerSettings = TrackingLinkSettings;

class ClusterTracker final : public InvalidationSubscription {
 public:
  // `topology` and `listener` must outlive this object. Starts one thread.
  ClusterTracker(ClusterTrackerSettings settings, ClusterTopology* topology,
                 InvalidationListener* listener);
  ~ClusterTracker() override;

 private:
  struct Link;
  using Links = std::vector<std::unique_ptr<Link>>;

  // The thread: links made again and again, each time to the primaries of then.
  void Run();
  // Makes the links (keeping those in `links` that are still up) and listens
  // on them until one fails or the topology moves.
  BackgroundLink::Attempt Follow(Links& links);
  // Makes `links` one tracking link per primary of the slot map; the map's
  // version they match goes to *version. An error when a link cannot be made.
  Status Connect(Links* links, std::uint64_t* version);
  // Hands every push to the listener (the link loop, background_link.h) until
  // a link fails, the topology moves past `version`, or we stop.
  Status Listen(Links& links, std::uint64_t version);
  // true when every link is up and the map is still at `version`.
  bool GoLive(std::uint64_t version);
  void GoDown();
  // The topology's hook: down at once, and the thread nudged to follow.
  void TopologyChanged();

  const ClusterTrackerSettings settings_;
  const RedisSession session_;
  ClusterTopology* const topology_;
  InvalidationListener* const listener_;
  std::mutex live_mutex_;
  bool live_ = false;    // guarded by live_mutex_
  BackgroundLink link_;  // last: its thread uses the members above
};

}  // namespace cachet::redis
