// SentinelWatcher: the +switch-master subscription and its thread.
#include "sentinel_watcher.h"

#include <sys/uio.h>

#include <utility>

#include "cachet/net/exchange.h"
#include "resp_encoder.h"
#include "sentinel_client.h"

namespace cachet::redis {

namespace {

// The pause before the next sentinel is tried: 50 ms, doubling up to 1 s.
constexpr ReconnectBackoff kBackoff{std::chrono::milliseconds(50), std::chrono::milliseconds(1000)};
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
      on_switch_(std::move(on_switch)),
      link_(kBackoff) {
  link_.Start([this] { Run(); });
}

SentinelWatcher::~SentinelWatcher() { link_.Stop(); }

void SentinelWatcher::Run() {
  std::size_t next = 0;
  bool ever_subscribed = false;
  link_.KeepConnecting([&] {
    const net::ServerAddress& sentinel = settings_.sentinels[next];
    next = (next + 1) % settings_.sentinels.size();  // a lost link moves on to the next
    return Watch(sentinel, &ever_subscribed);
  });
}

BackgroundLink::Attempt SentinelWatcher::Watch(const net::ServerAddress& sentinel,
                                               bool* ever_subscribed) {
  net::Connection connection(sentinel, settings_.connection);
  RespParser parser(session_.settings().limits);  // RESP2's: no pushes
  SwitchReader reader(settings_.master, connection.address().HostPort());
  if (!Subscribe(connection, parser, reader).ok()) return BackgroundLink::Attempt::kFailed;
  subscribed_.store(true);
  // A switch may have been announced while no link was up.
  if (*ever_subscribed) on_switch_();
  *ever_subscribed = true;
  (void)Listen(connection, parser, reader);
  subscribed_.store(false);
  return BackgroundLink::Attempt::kWasUp;
}

namespace {

// SUBSCRIBE's confirmation, read by the core's lone driver; what follows it is
// the link's (Listen).
class SubscribeAnswer {
 public:
  static constexpr bool kKeepsRest = true;
  SubscribeAnswer(RespParser& parser, SwitchReader& reader) : parser_(parser), reader_(reader) {}

  Status Consume(net::ReadBuffer& buffer) {
    // Bounded by the buffer: each pass takes one whole frame off it, or returns.
    while (!reader_.subscribed() && !buffer.empty()) {
      const RespParser::Outcome outcome = parser_.Parse(buffer.data());
      if (outcome == RespParser::Outcome::kError) return parser_.error();
      if (outcome == RespParser::Outcome::kNeedMore) return Status::OK();
      bool switched = false;
      Status s = reader_.Handle(parser_.reply().root(), &switched);
      buffer.Consume(parser_.consumed());
      if (!s.ok()) return s;
    }
    return Status::OK();
  }
  bool done() const noexcept { return reader_.subscribed(); }

 private:
  RespParser& parser_;
  SwitchReader& reader_;
};

}  // namespace

Status SentinelWatcher::Subscribe(net::Connection& connection, RespParser& parser,
                                  SwitchReader& reader) {
  const net::Deadline deadline = connection.CallDeadline();
  if (Status s = session_.Prepare(connection, deadline); !s.ok()) return s;
  std::string request;
  AppendCommand(&request, {"SUBSCRIBE", kChannel});
  iovec piece{request.data(), request.size()};
  SubscribeAnswer answer(parser, reader);
  return net::RunLoneExchange(connection, &piece, 1, answer, net::Clock::now(), deadline);
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
    switch (link_.Wait(connection.fd(), settings_.health_interval)) {
      case BackgroundLink::Wake::kStop:
        return Status::Unavailable("stopping");
      case BackgroundLink::Wake::kFailed:
        return Status::IoError(connection.Describe("waiting on the sentinel link failed"));
      case BackgroundLink::Wake::kNudged:
        break;  // nobody nudges this thread: nothing to look at
      // A message sent just before the close is still read: ReadSome then
      // reports the close.
      case BackgroundLink::Wake::kClosed:
      case BackgroundLink::Wake::kReadable: {
        const std::size_t before = buffer.size();
        if (Status s = connection.ReadSome(); !s.ok()) return s;
        if (buffer.size() > before) heard = true;
        break;
      }
      case BackgroundLink::Wake::kTimeout: {
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

}  // namespace cachet::redis
