// SentinelWatcher: the +switch-master subscription and its thread.
#include "sentinel_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "resp_encoder.h"
#include "sentinel_client.h"

namespace cachet::redis {

namespace {

constexpr std::chrono::milliseconds kFirstBackoff{50};
constexpr std::chrono::milliseconds kLongestBackoff{1000};
constexpr std::string_view kChannel = "+switch-master";

SessionSettings WatcherSession(SessionSettings session) {
  session.resp = 2;  // subscription messages as plain arrays
  session.db = 0;
  if (!session.client_name.empty()) session.client_name += "-sentinel-watch";
  return session;
}

bool IsText(RespValue value, std::string_view text) {
  return value.IsString() && value.text() == text;
}

}  // namespace

Status SwitchReader::Handle(RespValue reply, bool* switched) {
  *switched = false;
  if (reply.IsError()) return StatusFromError(reply.text(), where_);
  if (reply.type() != RespType::kArray || reply.size() < 2 || !reply[0].IsString()) {
    return Status::ProtocolError("sentinel link on " + where_ + ": unexpected " +
                                 std::string(RespTypeName(reply.type())));
  }
  const RespValue kind = reply[0];
  if (IsText(kind, "subscribe") && reply.size() == 3 && IsText(reply[1], kChannel)) {
    subscribed_ = true;
    return Status::OK();
  }
  if (IsText(kind, "pong") && pongs_due_ > 0) {
    --pongs_due_;
    return Status::OK();
  }
  if (IsText(kind, "message") && reply.size() == 3 && IsText(reply[1], kChannel) &&
      reply[2].IsString()) {
    Result<net::ServerAddress> moved = ReadSwitchMaster(reply[2].text(), master_);
    if (moved.ok()) *switched = true;
    // Another master's switch is no concern of ours; a message that does not
    // parse only makes us ask the sentinels, who know.
    if (moved.status().IsProtocolError()) *switched = true;
    return Status::OK();
  }
  return Status::ProtocolError("sentinel link on " + where_ + ": unexpected \"" +
                               std::string(kind.text()) + "\"");
}

SentinelWatcher::SentinelWatcher(WatcherSettings settings, std::function<void()> on_switch)
    : settings_(std::move(settings)),
      session_(WatcherSession(settings_.session)),
      on_switch_(std::move(on_switch)) {
  if (::pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Run(); });
}

SentinelWatcher::~SentinelWatcher() {
  if (net::CurrentProcessId() != owner_pid_) {
    // A forked child: the thread lives in the parent only (see
    // InvalidationTracker); release it unjoined and close this process's pipe.
    static_cast<void>(new std::thread(std::move(thread_)));
  } else {
    stopping_.store(true);
    if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
    thread_.join();
  }
  for (const int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

void SentinelWatcher::Run() {
  std::chrono::milliseconds backoff = kFirstBackoff;
  bool ever_subscribed = false;
  // Bounded by the stop signal: every pass ends with a wait that it ends.
  for (std::size_t next = 0; !stopping_.load(); next = (next + 1) % settings_.sentinels.size()) {
    net::Connection connection(settings_.sentinels[next], settings_.connection);
    RespParser parser(settings_.session.limits);
    SwitchReader reader(settings_.master, connection.address().HostPort());
    if (Subscribe(connection, parser, reader).ok()) {
      backoff = kFirstBackoff;
      subscribed_.store(true);
      // A switch may have been announced while no link was up.
      if (ever_subscribed) on_switch_();
      ever_subscribed = true;
      (void)Listen(connection, parser, reader);
      subscribed_.store(false);
    }
    if (Wait(-1, backoff) == Wake::kStop) break;
    backoff = std::min(backoff * 2, kLongestBackoff);
  }
}

Status SentinelWatcher::Subscribe(net::Connection& connection, RespParser& parser,
                                  SwitchReader& reader) {
  const net::Deadline deadline = connection.CallDeadline();
  if (Status s = session_.Prepare(connection, deadline); !s.ok()) return s;
  std::string request;
  AppendCommand(&request, {"SUBSCRIBE", kChannel});
  const std::string_view pieces[] = {request};
  if (Status s = connection.WriteAll(pieces, deadline); !s.ok()) return s;
  net::ReadBuffer& buffer = connection.buffer();
  // Bounded by `deadline`: each pass parses a reply or reads before it.
  while (!reader.subscribed()) {
    if (!buffer.empty()) {
      const RespParser::Outcome outcome = parser.Parse(buffer.data());
      if (outcome == RespParser::Outcome::kError) return parser.error();
      if (outcome == RespParser::Outcome::kReply) {
        bool switched = false;
        Status s = reader.Handle(parser.reply().root(), &switched);
        buffer.Consume(parser.consumed());
        if (!s.ok()) return s;
        continue;
      }
    }
    if (Status s = connection.ReadMore(deadline); !s.ok()) return s;
  }
  return Status::OK();
}

Status SentinelWatcher::Listen(net::Connection& connection, RespParser& parser,
                               SwitchReader& reader) {
  net::ReadBuffer& buffer = connection.buffer();
  bool heard = false;  // bytes arrived since the last PING went out
  // Bounded by the connection: it fails, stays silent past a PING, or we stop.
  for (;;) {
    while (!buffer.empty()) {
      const RespParser::Outcome outcome = parser.Parse(buffer.data());
      if (outcome == RespParser::Outcome::kError) return parser.error();
      if (outcome == RespParser::Outcome::kNeedMore) break;
      bool switched = false;
      Status s = reader.Handle(parser.reply().root(), &switched);
      buffer.Consume(parser.consumed());
      if (!s.ok()) return s;
      if (switched) on_switch_();
    }
    switch (Wait(connection.fd(), settings_.health_interval)) {
      case Wake::kStop:
        return Status::Unavailable("stopping");
      case Wake::kReadable: {
        const std::size_t before = buffer.size();
        if (Status s = connection.ReadSome(); !s.ok()) return s;
        if (buffer.size() > before) heard = true;
        break;
      }
      case Wake::kTimeout: {
        if (reader.pongs_due() > 0) {
          if (!heard) {
            return Status::Timeout(connection.Describe("no answer to PING on the sentinel link"));
          }
          heard = false;
          break;
        }
        std::string ping;
        AppendCommand(&ping, {"PING"});
        const std::string_view pieces[] = {ping};
        if (Status s = connection.WriteAll(pieces, connection.CallDeadline()); !s.ok()) return s;
        reader.PingSent();
        heard = false;
        break;
      }
    }
  }
}

SentinelWatcher::Wake SentinelWatcher::Wait(int fd, std::chrono::milliseconds timeout) const {
  pollfd fds[2] = {{wake_[0], POLLIN, 0}, {fd, POLLIN, 0}};
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
  if (ready > 0 && count == 2 && fds[1].revents != 0) return Wake::kReadable;
  return Wake::kTimeout;
}

}  // namespace cachet::redis
