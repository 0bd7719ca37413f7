// ClusterTopology: which Redis Cluster node serves each slot, and a connection
// pool per node.
//
// The slot map is loaded with CLUSTER SHARDS (Redis 7.0+), or CLUSTER SLOTS when
// a node does not know SHARDS, from the first node that answers: known primaries
// first, then the configured seeds. A MOVED reply points one slot at its new node
// at once (Moved); a full reload (Refresh) never floods the cluster: one thread
// loads while the others wait for its result (single flight), and reloads are at
// least `refresh_interval` apart. Nodes are added as they appear and never
// removed, so a node index stays valid for the topology's life. Replicas are
// never used: every slot routes to its primary.
//
// Thread-safe: lookups take a shared lock; updates an exclusive one.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cachet/net/server_pool.h"
#include "cluster_slots.h"
#include "redis_session.h"

namespace cachet::redis {

struct ClusterSettings {
  std::vector<net::ServerAddress> seeds;             // where the first slot map comes from
  std::chrono::milliseconds refresh_interval{1000};  // least time between two reloads
  std::uint32_t max_redirects = 16;                  // attempts per command: redirects and retries
  std::chrono::milliseconds retry_wait{20};          // first wait after TRYAGAIN, CLUSTERDOWN
};

class ClusterTopology {
 public:
  static constexpr std::size_t kNoNode = SIZE_MAX;

  // `session` must outlive the topology. Nothing is sent before the first use.
  ClusterTopology(ClusterSettings settings, net::ServerPoolOptions pool,
                  const RedisSession& session);
  ~ClusterTopology();
  ClusterTopology(const ClusterTopology&) = delete;
  ClusterTopology& operator=(const ClusterTopology&) = delete;

  // The node serving `slot`, or kNoNode when none is known.
  std::size_t NodeFor(std::uint16_t slot) const;
  // The index of `node`, added when new.
  std::size_t NodeAt(const ClusterNode& node);
  // A node's connections (one server, index 0). Valid as long as the topology.
  net::ServerPool& pool(std::size_t node) const;
  // "host:port" of a node.
  const std::string& where(std::size_t node) const;
  // Appends the health of every node known so far.
  void AppendHealth(std::vector<ServerHealth>* out) const;
  // Every node that serves a slot, each once; empty before the first load.
  std::vector<std::size_t> Primaries() const;

  // After MOVED: `slot` is served by `node` from now on.
  void Moved(std::uint16_t slot, const ClusterNode& node);
  // After ASK: a slot is being migrated, so the map is about to change.
  void Asked() { Changed(); }

  // Topology changes, for the near cache's tracking (cluster_tracker.h): the
  // count moves, and then the hook runs on the thread that saw the change,
  // whenever a slot is found served by another node (MOVED, a reload) and on
  // every ASK. Setting the hook (or none) waits for a call under way.
  std::uint64_t version() const noexcept { return version_.load(std::memory_order_acquire); }
  void SetChangeHook(std::function<void()> hook);

  // Reloads the slot map unless a reload finished since this call began (then
  // its outcome is returned) or the last one started less than refresh_interval
  // ago. kUnavailable when no node answered; kTimeout when `deadline` (the
  // calling operation's end) passed first, waiting for another thread's reload
  // included.
  // A reload asked for with no time left (the call's deadline passed) is not
  // begun, and so does not count against refresh_interval.
  Status Refresh(net::Deadline deadline);
  // Refresh() only if no other thread is reloading right now; never waits.
  void RefreshIfIdle(net::Deadline deadline);

  const ClusterSettings& settings() const noexcept { return settings_; }
  const net::ServerPoolOptions& pool_options() const noexcept { return pool_options_; }

 private:
  struct Node;
  Status Reload(net::Deadline deadline);
  // `*unreadable`: the node answered with a slot map that makes no sense.
  Status LoadFrom(std::size_t node, SlotMap* map, net::Deadline deadline, bool* unreadable);
  void Install(const SlotMap& map);
  std::vector<std::size_t> Candidates();
  // Moves the version and runs the hook. REQUIRES: mutex_ not held.
  void Changed();

  ClusterSettings settings_;
  net::ServerPoolOptions pool_options_;
  const RedisSession& session_;

  mutable std::shared_mutex mutex_;  // guards nodes_ and owner_
  std::vector<std::unique_ptr<Node>> nodes_;
  std::array<std::uint16_t, kSlotCount> owner_;
  // When a MOVED last named each slot's owner: a reload within kMovedTrust
  // after it leaves that slot alone, as the node it asked may be behind.
  std::array<net::Clock::time_point, kSlotCount> moved_at_;

  std::timed_mutex refresh_mutex_;  // held while reloading; guards the three below
  net::Clock::time_point last_started_{};
  net::Clock::time_point last_finished_{};
  Status last_status_;
  std::atomic<std::uint64_t> version_{0};
  std::mutex hook_mutex_;  // held while the hook runs
  std::function<void()> hook_;
};

}  // namespace cachet::redis
