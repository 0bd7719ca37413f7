// The cluster's slot map and per-node pools; loading it without flooding the cluster.
#include "cluster_topology.h"

#include <algorithm>

#include "cachet/net/lone_call.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

// How long a slot a MOVED named stays as it said, whatever a reload reads: a
// node's view catches up within gossip's rounds. Short, so that a real failover
// the reload saw is not kept out for long.
constexpr std::chrono::seconds kMovedTrust{1};

}  // namespace

struct ClusterTopology::Node {
  Node(ClusterNode n, const net::ServerPoolOptions& options)
      : id(std::move(n)), where(id.host + ":" + std::to_string(id.port)) {
    net::ServerAddress address{id.host, static_cast<std::uint16_t>(id.port), 1};
    std::vector<net::ServerAddress> one = {address};
    pool = std::make_unique<net::ServerPool>(
        one, net::Distribution::Create(net::DistributionKind::kModula, one), options);
  }
  ClusterNode id;
  std::string where;
  std::unique_ptr<net::ServerPool> pool;
};

ClusterTopology::ClusterTopology(ClusterSettings settings, net::ServerPoolOptions pool,
                                 const RedisSession& session)
    : settings_(std::move(settings)), pool_options_(pool), session_(session) {
  owner_.fill(SlotMap::kNoNode);
  moved_at_.fill(net::Clock::time_point::min());  // never: the steady clock may be young
  for (const net::ServerAddress& seed : settings_.seeds) {
    (void)NodeAt(ClusterNode{seed.host, seed.port, {}});
  }
}

ClusterTopology::~ClusterTopology() = default;

std::size_t ClusterTopology::NodeFor(std::uint16_t slot) const {
  std::shared_lock lock(mutex_);
  std::uint16_t owner = owner_[slot % kSlotCount];
  return owner == SlotMap::kNoNode ? kNoNode : owner;
}

std::size_t ClusterTopology::NodeAt(const ClusterNode& node) {
  auto find = [&]() -> std::size_t {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i]->id == node) return i;
    }
    return kNoNode;
  };
  {
    std::shared_lock lock(mutex_);
    if (std::size_t found = find(); found != kNoNode) return found;
  }
  std::unique_lock lock(mutex_);
  if (std::size_t found = find(); found != kNoNode) return found;
  nodes_.push_back(std::make_unique<Node>(node, pool_options_));
  return nodes_.size() - 1;
}

net::ServerPool& ClusterTopology::pool(std::size_t node) const {
  std::shared_lock lock(mutex_);
  return *nodes_[node]->pool;
}

const std::string& ClusterTopology::where(std::size_t node) const {
  std::shared_lock lock(mutex_);
  return nodes_[node]->where;
}

void ClusterTopology::AppendHealth(std::vector<ServerHealth>* out) const {
  std::shared_lock lock(mutex_);
  for (const auto& node : nodes_) node->pool->AppendHealth(out);
}

std::vector<std::size_t> ClusterTopology::Primaries() const {
  std::vector<bool> serves;
  {
    std::shared_lock lock(mutex_);
    serves.assign(nodes_.size(), false);
    for (std::uint16_t owner : owner_) {
      if (owner != SlotMap::kNoNode) serves[owner] = true;
    }
  }
  std::vector<std::size_t> primaries;
  for (std::size_t i = 0; i < serves.size(); ++i) {
    if (serves[i]) primaries.push_back(i);
  }
  return primaries;
}

void ClusterTopology::Moved(std::uint16_t slot, const ClusterNode& node) {
  std::size_t index = NodeAt(node);
  bool changed = false;
  {
    std::unique_lock lock(mutex_);
    std::uint16_t& owner = owner_[slot % kSlotCount];
    changed = owner != static_cast<std::uint16_t>(index);
    owner = static_cast<std::uint16_t>(index);
    moved_at_[slot % kSlotCount] = net::Clock::now();
  }
  if (changed) Changed();
}

void ClusterTopology::SetChangeHook(std::function<void()> hook) {
  const std::lock_guard lock(hook_mutex_);
  hook_ = std::move(hook);
}

void ClusterTopology::Changed() {
  version_.fetch_add(1, std::memory_order_acq_rel);
  const std::lock_guard lock(hook_mutex_);
  if (hook_) hook_();
}

Status ClusterTopology::Refresh(net::Deadline deadline) {
  const net::Clock::time_point asked = net::Clock::now();
  std::unique_lock lock(refresh_mutex_, deadline);
  if (!lock.owns_lock()) {
    return Status::Timeout(
        "redis cluster: the slot map was still being reloaded when the "
        "request timeout ran out");
  }
  // Single flight: whoever waited for a reload takes its outcome.
  if (last_finished_ >= asked) return last_status_;
  if (last_started_ != net::Clock::time_point{} &&
      net::Clock::now() - last_started_ < settings_.refresh_interval) {
    return last_status_;
  }
  // Begun now it would fail at once, and hold the next reload off for refresh_interval.
  if (net::Clock::now() >= deadline) {
    return Status::Timeout("redis cluster: no time was left to reload the slot map");
  }
  last_started_ = net::Clock::now();
  last_status_ = Reload(deadline);
  last_finished_ = net::Clock::now();
  return last_status_;
}

void ClusterTopology::RefreshIfIdle(net::Deadline deadline) {
  {
    std::unique_lock probe(refresh_mutex_, std::try_to_lock);
    if (!probe.owns_lock()) return;
  }
  (void)Refresh(deadline);
}

std::vector<std::size_t> ClusterTopology::Candidates() {
  std::vector<std::size_t> order = Primaries();
  std::size_t count = 0;
  {
    std::shared_lock lock(mutex_);
    count = nodes_.size();
  }
  // Then every other node, seeds first since they were added first.
  for (std::size_t i = 0; i < count; ++i) {
    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  }
  return order;
}

Status ClusterTopology::Reload(net::Deadline deadline) {
  Status last = Status::Unavailable("redis cluster: no node is known");
  std::size_t asked = 0;
  std::size_t unreadable = 0;  // nodes whose slot map made no sense
  for (std::size_t node : Candidates()) {
    if (net::Clock::now() >= deadline) {
      return Status::Timeout(
          "redis cluster: the request timeout ran out while loading the slot "
          "map; last: " +
          std::string(last.message()));
    }
    SlotMap map;
    bool unreadable_map = false;
    Status s = LoadFrom(node, &map, deadline, &unreadable_map);
    if (s.ok() && map.covered_slots() > 0) {
      Install(map);
      return Status::OK();
    }
    if (s.IsAuthFailed()) return s;
    ++asked;
    unreadable += unreadable_map;
    last = s.ok() ? Status::Unavailable("redis cluster " + where(node) + ": serves no slot") : s;
  }
  // Every node answered, with nothing a retry would read better: said at once.
  if (unreadable > 0 && unreadable == asked) {
    return Status::ProtocolError("redis cluster: no node sent a slot map cachet can read; last: " +
                                 std::string(last.message()));
  }
  return Status::Unavailable("redis cluster: could not load the slot map: " +
                             std::string(last.message()));
}

Status ClusterTopology::LoadFrom(std::size_t node, SlotMap* map, net::Deadline deadline,
                                 bool* unreadable) {
  net::ServerPool& node_pool = pool(node);
  const std::string host = node_pool.address(0).host;
  // CLUSTER SHARDS lists both ports of a node; the store's transport picks one.
  const NodePort port_kind =
      pool_options_.connection.tls != nullptr ? NodePort::kTls : NodePort::kPlain;
  Status parsed;
  // A slot map that makes no sense is the node's: its message names it.
  const auto named = [&](Status status) {
    if (status.ok()) return status;
    return Status::FromCode(status.code(),
                            "redis " + where(node) + ": " + std::string(status.message()));
  };
  Status s = net::CallServer(
      node_pool, 0, net::ServerPool::Use::kReadsReplies, net::Clock::now(), deadline, &session_,
      [&](net::Connection& connection, net::Clock::time_point) {
        std::string request;
        AppendCommand(&request, {"CLUSTER", "SHARDS"});
        bool no_shards = false;
        Status sent =
            session_.Run(connection, request, 1, deadline, [&](std::size_t, RespValue reply) {
              if (reply.IsError()) {
                no_shards = true;  // older than 7.0: ask for SLOTS instead
                return;
              }
              parsed = named(SlotMap::FromShards(reply, host, port_kind, map));
            });
        if (!sent.ok() || !no_shards) return sent;
        request.clear();
        AppendCommand(&request, {"CLUSTER", "SLOTS"});
        return session_.Run(connection, request, 1, deadline, [&](std::size_t, RespValue reply) {
          parsed = reply.IsError() ? StatusFromError(reply.text(), where(node))
                                   : named(SlotMap::FromSlots(reply, host, map));
        });
      });
  *unreadable = s.ok() && parsed.IsProtocolError();
  return s.ok() ? parsed : s;
}

void ClusterTopology::Install(const SlotMap& map) {
  std::vector<std::uint16_t> index_of;
  for (const ClusterNode& primary : map.primaries()) {
    index_of.push_back(static_cast<std::uint16_t>(NodeAt(primary)));
  }
  const ClusterNode* first = map.primaries().data();
  bool changed = false;
  // A MOVED is the word of the node that held the slot; the node a reload asked
  // may not have heard of the move yet (gossip lags), so a recent MOVED stands.
  const net::Clock::time_point trusted_since = net::Clock::now() - kMovedTrust;
  {
    std::unique_lock lock(mutex_);
    for (std::uint16_t slot = 0; slot < kSlotCount; ++slot) {
      if (moved_at_[slot] > trusted_since) continue;
      const ClusterNode* primary = map.PrimaryFor(slot);
      const std::uint16_t owner = primary == nullptr ? SlotMap::kNoNode : index_of[primary - first];
      changed = changed || owner_[slot] != owner;
      owner_[slot] = owner;
    }
  }
  if (changed) Changed();
}

}  // namespace cachet::redis
