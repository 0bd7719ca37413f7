// ClusterTracker: a CLIENT TRACKING ON BCAST link per primary, following the topology.
#include "cluster_tracker.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "resp_encoder.h"
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
  bool heard = false;  // bytes arrived since the last health check
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
  std::vector<pollfd> fds(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) fds[i].fd = links[i]->connection.fd();
  // What arrived with CLIENT TRACKING's answer (kept by its reader) is
  // handled before the first wait: the socket may have nothing more to say.
  for (const auto& link : links) {
    if (Status s = HandleFrames(*link); !s.ok()) {
      link->connection.Close();
      return s;
    }
  }
  auto next_check = net::Clock::now() + settings_.health_interval;
  // Bounded by the links: one fails, stays silent past a PING, the topology
  // moves, or we stop.
  for (;;) {
    if (topology_->version() != version) return Status::OK();
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_check - net::Clock::now());
    // A nudge (the topology moved) is seen at the top of the next pass.
    const BackgroundLink::Wake woke = link_.WaitAny(fds, left);
    if (woke == BackgroundLink::Wake::kStop) return Status::Unavailable("stopping");
    if (woke == BackgroundLink::Wake::kFailed) {
      return Status::IoError(std::string("tracking links: poll failed: ") + strerror(errno));
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
      const BackgroundLink::Wake news = BackgroundLink::Readiness(fds[i]);
      if (news == BackgroundLink::Wake::kClosed) {
        // The node is gone (FIN, RST): down at once, nothing unread matters.
        links[i]->connection.Close();
        return Status::IoError("tracking link to " + links[i]->connection.address().HostPort() +
                               " closed by the server");
      }
      if (news != BackgroundLink::Wake::kReadable) continue;
      if (Status s = Drain(*links[i]); !s.ok()) {
        links[i]->connection.Close();
        return s;
      }
    }
    if (net::Clock::now() >= next_check) {
      if (Status s = CheckHealth(links); !s.ok()) return s;
      // A failover or a new primary shows in the slot map; a change calls
      // TopologyChanged, and the next pass sees the new version.
      (void)topology_->Refresh(net::Clock::now() + settings_.connection.CallTimeout());
      next_check = net::Clock::now() + settings_.health_interval;
    }
  }
}

Status ClusterTracker::Drain(Link& link) {
  net::ReadBuffer& buffer = link.connection.buffer();
  const std::size_t before = buffer.size();
  if (Status s = link.connection.ReadSome(); !s.ok()) return s;
  if (buffer.size() > before) link.heard = true;
  return HandleFrames(link);
}

Status ClusterTracker::HandleFrames(Link& link) {
  net::ReadBuffer& buffer = link.connection.buffer();
  while (!buffer.empty()) {
    const RespParser::Outcome outcome = link.parser.Parse(buffer.data());
    if (outcome == RespParser::Outcome::kError) return link.parser.error();
    if (outcome == RespParser::Outcome::kNeedMore) break;
    Status s = link.reader.Handle(link.parser.reply().root());
    buffer.Consume(link.parser.consumed());
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ClusterTracker::CheckHealth(Links& links) {
  for (const auto& link : links) {
    if (link->reader.pongs_due() > 0) {
      // Silent for a whole interval after a PING: lost.
      if (!link->heard) {
        link->connection.Close();
        return Status::Timeout(
            link->connection.Describe("no answer to PING on the tracking link"));
      }
      link->heard = false;  // pushes came in; the PONG is still due
      continue;
    }
    std::string ping;
    RespCommand(&ping, 1).Arg("PING");
    const std::string_view pieces[] = {ping};
    if (Status s = link->connection.WriteAll(pieces, link->connection.CallDeadline()); !s.ok()) {
      link->connection.Close();
      return s;
    }
    link->reader.PingSent();
    link->heard = false;
  }
  return Status::OK();
}

}  // namespace cachet::redis
