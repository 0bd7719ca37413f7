// ClusterTracker: a CLIENT TRACKING ON BCAST link per primary, following the topology.
#include "cluster_tracker.h"

#include <algorithm>
#include <utility>

#include "resp_parser.h"

namespace cachet::redis {

namespace {

// The pause before the links are made again: 50 ms, doubling up to 2 s.
constexpr ReconnectBackoff kBackoff{std::chrono::milliseconds(50), std::chrono::milliseconds(2000)};

}  // namespace

struct ClusterTracker::Link {
  Link(const net::ServerAddress& address, const net::ConnectionOptions& options,
       const RespLimits& limits, InvalidationListener* listener)
      : connection(address, options),
        parser(limits),
        reader(listener, connection.address().HostPort()) {}
  net::Connection connection;
  RespParser parser;
  TrackingReader reader;
};

ClusterTracker::ClusterTracker(ClusterTrackerSettings settings, ClusterTopology* topology,
                               InvalidationListener* listener)
    : settings_(std::move(settings)),
      session_(TrackingSession(settings_.session)),
      topology_(topology),
      listener_(listener),
      link_(kBackoff) {
  topology_->SetChangeHook([this] { TopologyChanged(); });
  link_.Start([this] { Run(); });
}

ClusterTracker::~ClusterTracker() {
  // A forked child leaves the hook alone (a hook call under way in the parent
  // may hold its lock): its topology copy keeps a hook to this object, which
  // the child's Cache (destroyed with it) never reaches again.
  if (link_.InOwnerProcess()) topology_->SetChangeHook(nullptr);  // waits for a call under way
  link_.Stop();
}

void ClusterTracker::Run() {
  Links links;  // the thread's own, kept from one attempt to the next
  link_.KeepConnecting([&] { return Follow(links); });
}

BackgroundLink::Attempt ClusterTracker::Follow(Links& links) {
  std::uint64_t version = 0;
  BackgroundLink::Attempt outcome = BackgroundLink::Attempt::kFailed;
  if (Status s = Connect(&links, &version); !s.ok()) {
    // A primary that cannot be reached may have failed over: ask the cluster.
    (void)topology_->Refresh(net::Clock::now() + settings_.connection.CallTimeout());
  } else if (GoLive(version)) {
    const Status lost = Listen(links, version);
    GoDown();
    if (lost.ok()) return BackgroundLink::Attempt::kRetryNow;  // the topology moved: follow it
    outcome = BackgroundLink::Attempt::kWasUp;
  }
  // A link that failed is opened again; the others are kept.
  links.erase(std::remove_if(links.begin(), links.end(),
                             [](const auto& link) { return !link->connection.connected(); }),
              links.end());
  return outcome;
}

Status ClusterTracker::Connect(Links* links, std::uint64_t* version) {
  const net::Deadline deadline = net::Clock::now() + settings_.connection.CallTimeout();
  *version = topology_->version();
  std::vector<std::size_t> primaries = topology_->Primaries();
  if (primaries.empty()) {
    if (Status s = topology_->Refresh(deadline); !s.ok()) return s;
    *version = topology_->version();
    primaries = topology_->Primaries();
    if (primaries.empty()) return Status::Unavailable("redis cluster: no primary is known");
  }
  Links next;
  for (const std::size_t node : primaries) {
    const net::ServerAddress& address = topology_->pool(node).address(0);
    const std::string where = address.HostPort();
    auto kept = std::find_if(links->begin(), links->end(), [&](const auto& link) {
      return link && link->connection.address().HostPort() == where;
    });
    if (kept != links->end()) {
      next.push_back(std::move(*kept));
      continue;
    }
    auto link = std::make_unique<Link>(address, settings_.connection, session_.settings().limits,
                                       listener_);
    if (Status s = EstablishTracking(link->connection, link->parser, session_, settings_.prefixes);
        !s.ok()) {
      *links = std::move(next);  // what is up so far is kept for the next try
      return s;
    }
    next.push_back(std::move(link));
  }
  *links = std::move(next);  // links to nodes that are no longer primaries close here
  return Status::OK();
}

bool ClusterTracker::GoLive(std::uint64_t version) {
  const std::lock_guard lock(live_mutex_);
  if (link_.stopping() || topology_->version() != version) return false;
  live_ = true;
  listener_->OnTrackingLive(true);
  return true;
}

void ClusterTracker::GoDown() {
  const std::lock_guard lock(live_mutex_);
  if (!live_) return;
  live_ = false;
  // On the way out the near cache is going too: nothing to tell it.
  if (!link_.stopping()) listener_->OnTrackingLive(false);
}

void ClusterTracker::TopologyChanged() {
  GoDown();
  link_.Nudge();
}

Status ClusterTracker::Listen(Links& links, std::uint64_t version) {
  std::vector<ListenedLink> listened;
  listened.reserve(links.size());
  for (const auto& link : links) {
    listened.push_back({&link->connection, &link->parser, &link->reader, "tracking link"});
  }
  return link_.Listen(
      listened, settings_.health_interval,
      // A nudge (the topology moved) is seen here.
      [&] { return topology_->version() != version; },
      // A failover or a new primary shows in the slot map; a change calls
      // TopologyChanged, and the loop then sees the new version.
      [&] { (void)topology_->Refresh(net::Clock::now() + settings_.connection.CallTimeout()); });
}

}  // namespace cachet::redis
