// InvalidationTracker: CLIENT TRACKING ON BCAST connections and their pushes.
#include "invalidation_tracker.h"

#include <sys/uio.h>

#include <utility>

#include "cachet/net/exchange.h"
#include "resp_encoder.h"
#include "resp_frames.h"

namespace cachet::redis {

namespace {

// The pause before reconnecting: 50 ms, doubling up to 2 s.
constexpr ReconnectBackoff kBackoff{std::chrono::milliseconds(50), std::chrono::milliseconds(2000)};

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
      listener_(listener),
      link_(kBackoff) {
  // One thread per server, each keeping its tracking connection up.
  for (std::size_t i = 0; i < settings_.servers.size(); ++i) {
    link_.Start([this, i] { link_.KeepConnecting([this, i] { return Track(i); }); });
  }
}

InvalidationTracker::~InvalidationTracker() { link_.Stop(); }

BackgroundLink::Attempt InvalidationTracker::Track(std::size_t server) {
  net::Connection connection(settings_.servers[server], settings_.connection);
  RespParser parser(session_.settings().limits);  // RESP3's: pushes come
  if (!EstablishTracking(connection, parser, session_, settings_.prefixes).ok()) {
    return BackgroundLink::Attempt::kFailed;
  }
  TrackingReader reader(listener_, connection.address().HostPort());
  const ListenedLink link{&connection, &parser, &reader, "tracking link"};
  ServerUp();
  (void)link_.Listen({&link, 1}, settings_.health_interval);
  ServerDown();
  return BackgroundLink::Attempt::kWasUp;
}

namespace {

// CLIENT TRACKING's answer, read by the core's lone driver. Pushes before it are
// about keys nobody near holds yet; what follows it is the link loop's
// (BackgroundLink::Listen).
class TrackingAnswer {
 public:
  static constexpr bool kKeepsRest = true;
  TrackingAnswer(RespParser& parser, std::string where)
      : parser_(parser), where_(std::move(where)) {}

  Status Consume(net::ReadBuffer& buffer) {
    if (answered_) return Status::OK();
    return TakeFrames(parser_, buffer, where_, [this](RespValue reply, Frame& next) {
      if (reply.type() == RespType::kPush) return Status::OK();
      // Only +OK says tracking is on: anything else, and invalidations may never come.
      if (reply.IsError()) {
        answer = StatusFromError(reply.text(), where_);
      } else if (reply.type() != RespType::kSimpleString || reply.text() != "OK") {
        answer = Status::ProtocolError("tracking link on " + where_ +
                                       ": CLIENT TRACKING answered other than OK");
      }
      answered_ = true;
      next = Frame::kLast;  // what follows is the link's
      return Status::OK();
    });
  }
  bool done() const noexcept { return answered_; }

  Status answer;

 private:
  RespParser& parser_;
  const std::string where_;
  bool answered_ = false;
};

}  // namespace

Status EstablishTracking(net::Connection& connection, RespParser& parser,
                         const RedisSession& session, const std::vector<std::string>& prefixes) {
  const net::Deadline deadline = connection.CallDeadline();
  if (Status s = session.Prepare(connection, deadline); !s.ok()) return s;
  std::string request = TrackingCommand(prefixes);
  iovec piece{request.data(), request.size()};
  TrackingAnswer reader(parser, connection.address().HostPort());
  Status s = net::RunLoneExchange(connection, &piece, 1, reader, net::Clock::now(), deadline);
  return s.ok() ? reader.answer : s;
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

void InvalidationTracker::ServerUp() {
  const std::lock_guard lock(live_mutex_);
  if (++live_servers_ == settings_.servers.size()) listener_->OnTrackingLive(true);
}

void InvalidationTracker::ServerDown() {
  const std::lock_guard lock(live_mutex_);
  --live_servers_;
  // On the way out the near cache is going too: nothing to tell it.
  if (!link_.stopping()) listener_->OnTrackingLive(false);
}

}  // namespace cachet::redis
