// InvalidationTracker: CLIENT TRACKING ON BCAST connections and their pushes.
#include "invalidation_tracker.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "resp_encoder.h"

namespace cachet::redis {

namespace {

constexpr std::chrono::milliseconds kFirstBackoff{50};
constexpr std::chrono::milliseconds kLongestBackoff{2000};

// CLIENT TRACKING ON BCAST, with PREFIX p for each prefix (none: every key).
std::string TrackingCommand(const std::vector<std::string>& prefixes) {
  std::string request;
  RespCommand command(&request, 4 + 2 * prefixes.size());
  command.Arg("CLIENT").Arg("TRACKING").Arg("ON").Arg("BCAST");
  for (const std::string& prefix : prefixes) command.Arg("PREFIX").Arg(prefix);
  return request;
}

}  // namespace

SessionSettings TrackingSession(SessionSettings session) {
  session.resp = 3;  // pushes arrive on the connection that asked for them
  if (!session.client_name.empty()) session.client_name += "-tracking";
  return session;
}

InvalidationTracker::InvalidationTracker(TrackerSettings settings, InvalidationListener* listener)
    : settings_(std::move(settings)),
      session_(TrackingSession(settings_.session)),
      listener_(listener) {
  if (::pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  threads_.reserve(settings_.servers.size());
  for (std::size_t i = 0; i < settings_.servers.size(); ++i) {
    threads_.emplace_back([this, i] { Run(i); });
  }
}

InvalidationTracker::~InvalidationTracker() {
  if (net::CurrentProcessId() != owner_pid_) {
    // A forked child: the threads live in the parent only. Writing the shared
    // pipe would stop them there, and joining would wait forever here. The
    // thread objects are released unjoined (leaked: destroying a joinable one
    // terminates), and only this process's pipe descriptors are closed.
    static_cast<void>(new std::vector<std::thread>(std::move(threads_)));
    for (const int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
    return;
  }
  stopping_.store(true);
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
  for (std::thread& thread : threads_) thread.join();
  for (const int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

void InvalidationTracker::Run(std::size_t server) {
  std::chrono::milliseconds backoff = kFirstBackoff;
  // Bounded by the stop signal: every pass ends with a wait that it ends.
  while (!stopping_.load()) {
    net::Connection connection(settings_.servers[server], settings_.connection);
    RespParser parser(settings_.session.limits);
    if (EstablishTracking(connection, parser, session_, settings_.prefixes).ok()) {
      backoff = kFirstBackoff;
      ServerUp();
      (void)Listen(connection, parser);
      ServerDown();
    }
    if (Wait(-1, backoff) == Wake::kStop) break;
    backoff = std::min(backoff * 2, kLongestBackoff);
  }
}

Status EstablishTracking(net::Connection& connection, RespParser& parser,
                         const RedisSession& session, const std::vector<std::string>& prefixes) {
  const net::Deadline deadline = connection.CallDeadline();
  if (Status s = session.Prepare(connection, deadline); !s.ok()) return s;
  const std::string request = TrackingCommand(prefixes);
  const std::string_view pieces[] = {request};
  if (Status s = connection.WriteAll(pieces, deadline); !s.ok()) return s;
  net::ReadBuffer& buffer = connection.buffer();
  // Bounded by `deadline`: each pass parses a reply or reads before it.
  for (;;) {
    if (!buffer.empty()) {
      const RespParser::Outcome outcome = parser.Parse(buffer.data());
      if (outcome == RespParser::Outcome::kError) return parser.error();
      if (outcome == RespParser::Outcome::kReply) {
        const RespValue reply = parser.reply().root();
        Status s = reply.IsError() ? StatusFromError(reply.text(), connection.address().HostPort())
                                   : Status::OK();
        // A push before the answer is about keys nobody near holds yet.
        const bool answered = reply.type() != RespType::kPush;
        buffer.Consume(parser.consumed());
        if (answered) return s;
        continue;
      }
    }
    if (Status s = connection.ReadMore(deadline); !s.ok()) return s;
  }
}

Status InvalidationTracker::Listen(net::Connection& connection, RespParser& parser) {
  net::ReadBuffer& buffer = connection.buffer();
  TrackingReader reader(listener_, connection.address().HostPort());
  bool heard = false;  // bytes arrived since the last PING went out
  // Bounded by the connection: it fails, stays silent past a PING, or we stop.
  for (;;) {
    while (!buffer.empty()) {
      const RespParser::Outcome outcome = parser.Parse(buffer.data());
      if (outcome == RespParser::Outcome::kError) return parser.error();
      if (outcome == RespParser::Outcome::kNeedMore) break;
      Status s = reader.Handle(parser.reply().root());
      buffer.Consume(parser.consumed());
      if (!s.ok()) return s;
    }
    switch (Wait(connection.fd(), settings_.health_interval)) {
      case Wake::kStop:
        return Status::Unavailable("stopping");
      case Wake::kClosed:
        // Whatever is still unread no longer matters: everything is dropped.
        return Status::IoError(connection.Describe("tracking link closed by the server"));
      case Wake::kReadable: {
        const std::size_t before = buffer.size();
        if (Status s = connection.ReadSome(); !s.ok()) return s;
        if (buffer.size() > before) heard = true;
        break;
      }
      case Wake::kTimeout: {
        if (reader.pongs_due() > 0) {
          // Silent for a whole interval after a PING: lost.
          if (!heard) {
            return Status::Timeout(connection.Describe("no answer to PING on the tracking link"));
          }
          heard = false;  // pushes came in; the PONG is still due
          break;
        }
        std::string ping;
        RespCommand(&ping, 1).Arg("PING");
        const std::string_view pieces[] = {ping};
        if (Status s = connection.WriteAll(pieces, connection.CallDeadline()); !s.ok()) return s;
        reader.PingSent();
        heard = false;
        break;
      }
    }
  }
}

Status TrackingReader::Handle(RespValue reply) {
  if (reply.type() == RespType::kPush) return Invalidate(reply);
  if (reply.IsError()) return StatusFromError(reply.text(), where_);
  if (pongs_due_ == 0) {
    return Status::ProtocolError("tracking link on " + where_ +
                                 ": a reply with no PING outstanding");
  }
  if (reply.type() != RespType::kSimpleString || reply.text() != "PONG") {
    return Status::ProtocolError("tracking link on " + where_ + ": expected PONG, got \"" +
                                 std::string(reply.text()) + "\"");
  }
  --pongs_due_;
  return Status::OK();
}

Status TrackingReader::Invalidate(RespValue push) {
  if (push.size() != 2 || !push[0].IsString() || push[0].text() != "invalidate") {
    return Status::ProtocolError("tracking link on " + where_ +
                                 ": a push other than invalidate with its keys");
  }
  const RespValue keys = push[1];
  if (keys.IsNull()) {
    listener_->OnInvalidateAll();  // the server was flushed
    return Status::OK();
  }
  if (keys.type() != RespType::kArray) {
    return Status::ProtocolError("tracking link on " + where_ +
                                 ": invalidate carries neither keys nor a null");
  }
  std::vector<std::string_view> changed;
  changed.reserve(keys.size());
  for (const RespValue key : keys) {
    if (!key.IsString()) {
      return Status::ProtocolError("tracking link on " + where_ +
                                   ": invalidate with a non-string key");
    }
    changed.push_back(key.text());
  }
  listener_->OnInvalidate(changed);
  return Status::OK();
}

InvalidationTracker::Wake InvalidationTracker::Wait(int fd,
                                                    std::chrono::milliseconds timeout) const {
  pollfd fds[2] = {{wake_[0], POLLIN, 0}, {fd, POLLIN | POLLRDHUP, 0}};
  const nfds_t count = fd >= 0 ? 2 : 1;
  // A signal (EINTR) is no timeout: wait again for what is left.
  const auto until = std::chrono::steady_clock::now() + timeout;
  int ready = 0;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    ready = ::poll(fds, count, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready >= 0 || errno != EINTR) break;
  }
  if (stopping_.load() || (fds[0].revents & POLLIN) != 0) return Wake::kStop;
  if (ready > 0 && count == 2 && (fds[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
    return Wake::kClosed;
  }
  if (ready > 0 && count == 2 && fds[1].revents != 0) return Wake::kReadable;
  return Wake::kTimeout;
}

void InvalidationTracker::ServerUp() {
  const std::lock_guard lock(live_mutex_);
  if (++live_servers_ == settings_.servers.size()) listener_->OnTrackingLive(true);
}

void InvalidationTracker::ServerDown() {
  const std::lock_guard lock(live_mutex_);
  --live_servers_;
  // On the way out the near cache is going too: nothing to tell it.
  if (!stopping_.load()) listener_->OnTrackingLive(false);
}

}  // namespace cachet::redis
