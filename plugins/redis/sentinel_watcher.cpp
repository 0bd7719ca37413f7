// SentinelWatcher: the +switch-master subscription and its thread.
#include "sentinel_watcher.h"

#include <sys/uio.h>

#include <utility>

#include "cachet/net/exchange.h"
#include "resp_encoder.h"
#include "resp_frames.h"
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

SentinelWatcher::SentinelWatcher(WatcherSettings settings, std::function<void()> on_switch,
                                 OutcomeFn on_outcome)
    : settings_(std::move(settings)),
      session_(WatcherSession(settings_.session)),
      on_switch_(std::move(on_switch)),
      on_outcome_(std::move(on_outcome)),
      link_(kBackoff) {
  link_.Start([this] { Run(); });
}

SentinelWatcher::~SentinelWatcher() { link_.Stop(); }

void SentinelWatcher::Run() {
  std::size_t next = 0;
  link_.KeepConnecting([&] {
    const std::size_t index = next;
    next = (next + 1) % settings_.sentinels.size();  // a lost link moves on to the next
    return Watch(index);
  });
}

namespace {

// SUBSCRIBE's confirmation, read by the core's lone driver; what follows it is
// the link loop's (BackgroundLink::Listen).
class SubscribeAnswer {
 public:
  static constexpr bool kKeepsRest = true;
  SubscribeAnswer(RespParser& parser, SwitchReader& reader, const net::Connection& connection)
      : parser_(parser), reader_(reader), connection_(connection) {}

  Status Consume(net::ReadBuffer& buffer) {
    if (done()) return Status::OK();
    return TakeFrames(parser_, buffer, connection_, [this](RespValue reply, Frame& next) {
      bool switched = false;  // before the confirmation: nothing to follow yet
      Status s = reader_.Handle(reply, &switched);
      if (done()) next = Frame::kLast;  // what follows is the link's
      return s;
    });
  }
  bool done() const noexcept { return reader_.subscribed(); }

 private:
  RespParser& parser_;
  SwitchReader& reader_;
  const net::Connection& connection_;
};

// The subscription as the link loop reads it: a switch of our master calls
// `on_switch`.
class SwitchLink final : public LinkReader {
 public:
  SwitchLink(SwitchReader& reader, const std::function<void()>& on_switch)
      : reader_(reader), on_switch_(on_switch) {}
  Status Handle(RespValue frame) override {
    bool switched = false;
    Status s = reader_.Handle(frame, &switched);
    if (s.ok() && switched) on_switch_();
    return s;
  }
  void PingSent() noexcept override { reader_.PingSent(); }
  std::size_t pongs_due() const noexcept override { return reader_.pongs_due(); }

 private:
  SwitchReader& reader_;
  const std::function<void()>& on_switch_;
};

}  // namespace

BackgroundLink::Attempt SentinelWatcher::Watch(std::size_t index) {
  net::Connection connection(settings_.sentinels[index], settings_.connection);
  RespParser parser(session_.settings().limits);  // RESP2's: no pushes
  SwitchReader reader(settings_.master, connection.address().HostPort());
  const Status subscribed = Subscribe(connection, parser, reader);
  // The sentinel's health: with every sentinel gone, the watcher is the one asking them.
  on_outcome_(index, subscribed);
  if (!subscribed.ok()) return BackgroundLink::Attempt::kFailed;
  subscribed_.store(true);
  // A switch may have been announced while no link was up: before this one,
  // or, the first time, between the router's first discovery and now.
  on_switch_();
  SwitchLink switches(reader, on_switch_);
  const ListenedLink link{&connection, &parser, &switches, "sentinel link"};
  (void)link_.Listen({&link, 1}, settings_.health_interval);
  subscribed_.store(false);
  return BackgroundLink::Attempt::kWasUp;
}

Status SentinelWatcher::Subscribe(net::Connection& connection, RespParser& parser,
                                  SwitchReader& reader) {
  const net::Deadline deadline = connection.CallDeadline();
  if (Status s = session_.Prepare(connection, deadline); !s.ok()) return s;
  std::string request;
  AppendCommand(&request, {"SUBSCRIBE", kChannel});
  iovec piece{request.data(), request.size()};
  SubscribeAnswer answer(parser, reader, connection);
  return net::RunLoneExchange(connection, &piece, 1, answer, net::Clock::now(), deadline);
}

}  // namespace cachet::redis
