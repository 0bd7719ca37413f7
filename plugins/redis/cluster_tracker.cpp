// ClusterTracker: a CLIENT TRACKING ON BCAST link per primary, following the topology.
#include "cluster_tracker.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "resp_encoder.h"
#include "resp_parser.h"

namespace cachet::redis {

namespace {

constexpr std::chrono::milliseconds kFirstBackoff{50};
constexpr std::chrono::milliseconds kLongestBackoff{2000};

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
      listener_(listener) {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  topology_->SetChangeHook([this] { TopologyChanged(); });
  thread_ = std::thread([this] { Run(); });
}

ClusterTracker::~ClusterTracker() {
  if (net::CurrentProcessId() != owner_pid_) {
    // A forked child: the thread lives in the parent only (as in
    // InvalidationTracker); it is released unjoined and only this process's
    // pipe copies are closed. The child's topology copy keeps a hook to this
    // object, which the child's Cache (destroyed with it) never reaches again.
    static_cast<void>(new std::thread(std::move(thread_)));
    for (const int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
    return;
  }
  topology_->SetChangeHook(nullptr);  // waits for a hook call under way
  stopping_.store(true);
  Wake();
  thread_.join();
  for (const int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

void ClusterTracker::Run() {
  std::chrono::milliseconds backoff = kFirstBackoff;
  std::vector<std::unique_ptr<Link>> links;
  // Bounded by the stop signal: every pass ends in a wait that it ends.
  while (!stopping_.load()) {
    std::uint64_t version = 0;
    Status s = Connect(&links, &version);
    if (s.ok() && GoLive(version)) {
      backoff = kFirstBackoff;
      s = Listen(links, version);
      GoDown();
      if (s.ok()) continue;  // the topology moved: follow it at once
    } else if (!s.ok()) {
      // A primary that cannot be reached may have failed over: ask the cluster.
      (void)topology_->Refresh(net::Clock::now() + settings_.connection.CallTimeout());
    }
    // A link that failed is opened again; the others are kept.
    links.erase(std::remove_if(links.begin(), links.end(),
                               [](const auto& link) { return !link->connection.connected(); }),
                links.end());
    if (!Pause(backoff)) break;
    backoff = std::min(backoff * 2, kLongestBackoff);
  }
}

Status ClusterTracker::Connect(std::vector<std::unique_ptr<Link>>* links, std::uint64_t* version) {
  const net::Deadline deadline = net::Clock::now() + settings_.connection.CallTimeout();
  *version = topology_->version();
  std::vector<std::size_t> primaries = topology_->Primaries();
  if (primaries.empty()) {
    if (Status s = topology_->Refresh(deadline); !s.ok()) return s;
    *version = topology_->version();
    primaries = topology_->Primaries();
    if (primaries.empty()) return Status::Unavailable("redis cluster: no primary is known");
  }
  std::vector<std::unique_ptr<Link>> next;
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
    auto link = std::make_unique<Link>(address, settings_.connection, settings_.session.limits,
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
  if (stopping_.load() || topology_->version() != version) return false;
  live_ = true;
  listener_->OnTrackingLive(true);
  return true;
}

void ClusterTracker::GoDown() {
  const std::lock_guard lock(live_mutex_);
  if (!live_) return;
  live_ = false;
  // On the way out the near cache is going too: nothing to tell it.
  if (!stopping_.load()) listener_->OnTrackingLive(false);
}

void ClusterTracker::TopologyChanged() {
  GoDown();
  Wake();
}

Status ClusterTracker::Listen(std::vector<std::unique_ptr<Link>>& links, std::uint64_t version) {
  std::vector<pollfd> fds(links.size() + 1);
  auto next_check = net::Clock::now() + settings_.health_interval;
  // Bounded by the links: one fails, stays silent past a PING, the topology
  // moves, or we stop.
  for (;;) {
    if (topology_->version() != version) return Status::OK();
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_check - net::Clock::now());
    fds[0] = {wake_[0], POLLIN, 0};
    for (std::size_t i = 0; i < links.size(); ++i) {
      fds[i + 1] = {links[i]->connection.fd(), POLLIN | POLLRDHUP, 0};
    }
    const int ready =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready < 0 && errno != EINTR) {
      return Status::IoError(std::string("tracking links: poll failed: ") + strerror(errno));
    }
    if (stopping_.load()) return Status::Unavailable("stopping");
    if (ready > 0 && fds[0].revents != 0) DrainWake();
    for (std::size_t i = 0; ready > 0 && i < links.size(); ++i) {
      if (fds[i + 1].revents == 0) continue;
      if ((fds[i + 1].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
        // The node is gone (FIN, RST): down at once, nothing unread matters.
        links[i]->connection.Close();
        return Status::IoError("tracking link to " + links[i]->connection.address().HostPort() +
                               " closed by the server");
      }
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

Status ClusterTracker::CheckHealth(std::vector<std::unique_ptr<Link>>& links) {
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

bool ClusterTracker::Pause(std::chrono::milliseconds timeout) {
  pollfd fd = {wake_[0], POLLIN, 0};
  const auto until = net::Clock::now() + timeout;
  // A signal (EINTR) is no timeout: wait again for what is left.
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - net::Clock::now());
    const int ready = ::poll(&fd, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready >= 0 || errno != EINTR) break;
  }
  DrainWake();
  return !stopping_.load();
}

void ClusterTracker::Wake() {
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);  // a full pipe already wakes
}

void ClusterTracker::DrainWake() {
  char bytes[64];
  // Bounded: the pipe is non-blocking and holds what was written.
  while (wake_[0] >= 0 && ::read(wake_[0], bytes, sizeof bytes) > 0) {
  }
}

}  // namespace cachet::redis
