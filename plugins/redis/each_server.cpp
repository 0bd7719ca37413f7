// RunOnEachTarget: one command to several servers at once (see each_server.h).
#include "each_server.h"

#include <memory>
#include <utility>
#include <vector>

#include "cachet/net/batch_runner.h"
#include "resp_frames.h"

namespace cachet::redis {

namespace {

// One server's share of a command sent to every server: the command, and its
// one reply, kept whole (its bytes) until the runner settles the exchanges in
// configuration order; then the caller's reader gets it. RESP3 pushes before
// and right after the reply go to the session's hook; anything else after it
// is leftover, and closes the connection.
class EachServerReply final : public net::ServerBatch {
 public:
  // `request` is copied (a push hook may reuse the caller's buffer while
  // other servers' requests are still going out); the rest is borrowed.
  EachServerReply(std::string_view request, const RedisSession& session, const std::string& where,
                  std::string prefix, const CommandRouter::EachServerFn& on_reply)
      : request_(request),
        session_(session),
        where_(where),
        prefix_(std::move(prefix)),
        on_reply_(on_reply),
        parser_(session.settings().limits) {}

  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }
  Status Consume(net::ReadBuffer& buffer) override {
    return TakeFrames(parser_, buffer, where_, [&](RespValue frame, Frame& next) {
      if (frame.type() == RespType::kPush) {
        session_.DeliverPush(frame, where_);
      } else if (answered_) {
        next = Frame::kLeft;  // nobody's reply: the exchange's leftover error
      } else {
        bytes_.assign(buffer.data().substr(0, parser_.consumed()));
        answered_ = true;
      }
      return Status::OK();
    });
  }
  bool done() const noexcept override { return answered_; }
  // Hands the reply to the caller's reader (or keeps why the exchange failed).
  void Settle(const Status& transport) override {
    if (!transport.ok()) {
      outcome_ = transport;
      return;
    }
    // The bytes hold one whole reply: parsed again, it is the same reply.
    parser_.Reset();
    (void)parser_.Parse(bytes_);
    outcome_ = on_reply_(parser_.reply().root(), where_, prefix_);
  }
  // A reply of the wrong kind for the command: the stream may be out of step.
  bool poisoned() const noexcept override { return outcome_.IsProtocolError(); }

  const Status& outcome() const noexcept { return outcome_; }

 private:
  std::string request_;
  const RedisSession& session_;
  const std::string& where_;
  std::string prefix_;
  const CommandRouter::EachServerFn& on_reply_;
  RespParser parser_;
  std::string bytes_;  // the reply, whole
  bool answered_ = false;
  Status outcome_;
};

}  // namespace

Status RunOnEachTarget(std::span<const ServerTarget> targets, std::string_view request,
                       const RedisSession& session, net::Deadline deadline,
                       const CommandRouter::EachServerFn& on_reply) {
  if (session.InPushHook()) [[unlikely]]
    return RedisSession::PushHookRefusal(targets.empty() ? "" : *targets.front().where);
  std::vector<std::unique_ptr<EachServerReply>> replies;
  std::vector<net::ServerBatch*> batches;
  std::vector<net::ServerRef> servers;
  for (const ServerTarget& t : targets) {
    std::string prefix = targets.size() > 1 ? *t.where + " " : "";
    replies.push_back(
        std::make_unique<EachServerReply>(request, session, *t.where, std::move(prefix), on_reply));
    batches.push_back(replies.back().get());
    servers.push_back({t.pool, t.server});
  }
  // Every server at once, by one deadline; the runner settles the exchanges,
  // and so reads the replies, in target order.
  const std::vector<Status> outcomes = net::RunOnEach(servers, batches, deadline, &session);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Status& outcome = outcomes[i].ok() ? replies[i]->outcome() : outcomes[i];
    if (!outcome.ok()) return outcome;
  }
  return Status::OK();
}

}  // namespace cachet::redis
