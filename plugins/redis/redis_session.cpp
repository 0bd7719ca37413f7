// Connecting, the handshake, and one exchange of pipelined replies for one Redis server.
#include "redis_session.h"

#include <sys/uio.h>

#include <string>

#include "cachet/net/exchange.h"
#include "cachet/net/lone_call.h"
#include "resp_encoder.h"
#include "resp_frames.h"

namespace cachet::redis {

namespace {

const std::string kDefaultUser = "default";

bool StartsWithWord(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

// The thread's parser (nothing is allocated per exchange once it has grown),
// and whether a push hook runs on the thread. One thread_local object, not
// several: each costs a TLS lookup per call.
struct PerThread {
  explicit PerThread(const RespLimits& first) : parser(first), applied(first) {}
  RespParser parser;
  RespLimits applied;
  bool in_push_hook = false;
};

PerThread& ThreadState(const RespLimits& limits) {
  thread_local PerThread mine(limits);
  return mine;
}

// One thread may serve several backends, each with its own limits: the parser
// takes the caller's. REQUIRES: the parser idle or about to be reset.
RespParser& ParserFor(PerThread& mine, const RespLimits& limits) {
  if (!(mine.applied == limits)) {
    if (!mine.parser.idle()) mine.parser.Reset();
    mine.parser.set_limits(limits);
    mine.applied = limits;
  }
  return mine.parser;
}

// A Redis exchange asked for inside a push hook: the outer exchange's parser
// is mid-stream while the hook runs.
Status PushHookRefusal(const net::Connection& connection) {
  return Status::InvalidArgument("redis " + connection.address().HostPort() +
                                 ": a push hook (on_push) may not run a Redis command");
}

}  // namespace

Status StatusFromError(std::string_view error, std::string_view where) {
  std::string message = "redis " + std::string(where) + ": " + std::string(error);
  if (StartsWithWord(error, "WRONGPASS") || StartsWithWord(error, "NOAUTH") ||
      StartsWithWord(error, "NOPERM")) {
    return Status::AuthFailed(message);
  }
  for (std::string_view busy : {"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"}) {
    if (StartsWithWord(error, busy)) return Status::Unavailable(message);
  }
  return Status::InvalidArgument(message);
}

Status RedisSession::Run(net::Connection& connection, std::string_view request,
                         std::size_t reply_count, net::Deadline deadline,
                         ReplyHandler on_reply) const {
  PerThread& mine = ThreadState(settings_.limits);
  if (mine.in_push_hook) [[unlikely]]
    return PushHookRefusal(connection);
  RespParser& parser = ParserFor(mine, settings_.limits);
  // A previous exchange may have stopped in the middle of a reply or on an error.
  if (!parser.idle()) parser.Reset();
  SessionReplies replies(parser, connection, reply_count, on_reply, &settings_.on_push,
                         &mine.in_push_hook);
  iovec piece{const_cast<char*>(request.data()), request.size()};
  return net::RunLoneExchange(connection, &piece, 1, replies, net::Clock::now(), deadline);
}

Status RedisSession::Prepare(net::Connection& connection, net::Deadline deadline) const {
  if (connection.connected()) return Status::OK();
  if (ThreadState(settings_.limits).in_push_hook) [[unlikely]]
    return PushHookRefusal(connection);
  return net::ConnectAlone(connection, this, deadline);
}

std::unique_ptr<net::Login> RedisSession::NewLogin(const net::Connection& connection) const {
  auto login = std::make_unique<RedisLogin>(settings_, connection.address().HostPort());
  if (login->empty()) return nullptr;
  return login;
}

RedisLogin::RedisLogin(const SessionSettings& settings, std::string where)
    : where_(std::move(where)),
      user_(settings.username.empty() ? kDefaultUser : settings.username),
      parser_(settings.limits) {
  const bool has_password = !settings.password.empty();
  if (settings.resp == 3) {
    // HELLO authenticates in the same command, since before AUTH it would be
    // refused with NOAUTH.
    RespCommand hello(&request_, has_password ? 5 : 2);
    hello.Arg("HELLO").Arg("3");
    if (has_password) hello.Arg("AUTH").Arg(user_).Arg(settings.password);
    ++commands_;
  } else if (has_password) {
    if (settings.username.empty()) {
      RespCommand(&request_, 2).Arg("AUTH").Arg(settings.password);
    } else {
      RespCommand(&request_, 3).Arg("AUTH").Arg(settings.username).Arg(settings.password);
    }
    ++commands_;
  }
  if (settings.db != 0) {
    RespCommand(&request_, 2).Arg("SELECT").Arg(settings.db);
    ++commands_;
  }
  if (!settings.client_name.empty()) {
    RespCommand(&request_, 3).Arg("CLIENT").Arg("SETNAME").Arg(settings.client_name);
    ++commands_;
  }
}

Status RedisLogin::Consume(net::ReadBuffer& buffer) {
  Status s = TakeFrames(parser_, buffer, where_, [this](RespValue frame, Frame& next) {
    if (frame.type() == RespType::kPush) [[unlikely]]
      return Status::OK();  // no reply to a login command
    if (done()) [[unlikely]] {
      next = Frame::kLeft;  // nobody's reply: left for the leftover rule
      return Status::OK();
    }
    ++answered_;
    if (frame.IsError() && first_error_.ok()) first_error_ = StatusFromError(frame.text(), where_);
    return Status::OK();
  });
  if (!s.ok() || !done() || first_error_.ok()) return s;
  if (first_error_.IsAuthFailed()) {
    return Status::AuthFailed("redis " + where_ + ": authentication failed for user '" + user_ +
                              "' (check [redis] username and password)");
  }
  return first_error_;
}

Status SessionReplies::Consume(net::ReadBuffer& buffer) {
  return TakeFrames(parser_, buffer, connection_, [this](RespValue frame, Frame& next) {
    if (frame.type() == RespType::kPush) [[unlikely]] {
      Push(frame);  // the frame views the buffer, which stays put until the next read
    } else if (done()) [[unlikely]] {
      next = Frame::kLeft;  // nobody's reply: left for the leftover rule
    } else {
      on_reply_(index_++, frame);
    }
    return Status::OK();
  });
}

void SessionReplies::Push(RespValue push) const {
  if (on_push_ == nullptr || !*on_push_) return;
  // While the hook runs, a Redis exchange on this thread is refused (see Run).
  struct Guard {
    bool* running;
    explicit Guard(bool* flag) : running(flag) { *running = true; }
    ~Guard() { *running = false; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  } guard(in_push_hook_);
  (*on_push_)(push, connection_.address().HostPort());
}

}  // namespace cachet::redis
