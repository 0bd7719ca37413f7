// Connecting, the handshake, and one exchange of pipelined replies for one Redis server.
#include "redis_session.h"

#include <sys/uio.h>

#include <atomic>
#include <string>

#include "cachet/net/exchange.h"
#include "cachet/net/lone_call.h"
#include "redis_replies.h"
#include "resp_encoder.h"
#include "resp_frames.h"

namespace cachet::redis {

namespace {

const std::string kDefaultUser = "default";

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

}  // namespace

Status StatusFromError(std::string_view error, std::string_view where) {
  while (error.ends_with(' ')) error.remove_suffix(1);  // "... beginning with: 'k' "
  std::string message = "redis " + std::string(where) + ": " + std::string(error);
  if (StartsWithWord(error, "WRONGPASS") || StartsWithWord(error, "NOAUTH") ||
      StartsWithWord(error, "NOPERM")) {
    return Status::AuthFailed(message);
  }
  for (std::string_view busy : {"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"}) {
    if (StartsWithWord(error, busy)) return Status::Unavailable(message);
  }
  // A command the server lacks: an older or restricted Redis, or no data node
  // at all (a sentinel answers only its own commands).
  if (error.starts_with("ERR unknown command")) {
    return Status::Unsupported(message +
                               " (the server lacks it: an older or restricted Redis, or "
                               "a sentinel where `mode` expects a data node, or the "
                               "reverse)");
  }
  return Status::InvalidArgument(message);
}

Status RedisSession::Run(net::Connection& connection, std::string_view request,
                         std::size_t reply_count, net::Deadline deadline,
                         ReplyHandler on_reply) const {
  if (InPushHook()) [[unlikely]]
    return PushHookRefusal(connection.address().HostPort());
  return Exchange(connection, request, reply_count, net::Clock::now(), deadline, on_reply);
}

// Flattened: the exchange's steps and the reply reader compile as one function.
[[gnu::flatten]] Status RedisSession::Exchange(net::Connection& connection,
                                               std::string_view request, std::size_t reply_count,
                                               net::Clock::time_point began,
                                               net::Deadline deadline,
                                               ReplyHandler on_reply) const {
  RespParser& parser = ParserFor(ThreadState(settings_.limits), settings_.limits);
  // A previous exchange may have stopped in the middle of a reply or on an error.
  if (!parser.idle()) parser.Reset();
  SessionReplies replies(parser, connection, reply_count, on_reply, *this);
  iovec piece{const_cast<char*>(request.data()), request.size()};
  return net::RunLoneExchange(connection, &piece, 1, replies, began, deadline);
}

Status RedisSession::Prepare(net::Connection& connection, net::Deadline deadline) const {
  if (connection.connected()) return Status::OK();
  if (InPushHook()) [[unlikely]]
    return PushHookRefusal(connection.address().HostPort());
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
      credentials_prefix_(settings.credentials_prefix),
      parser_(settings.limits) {
  const bool has_password = !settings.password.empty();
  authenticates_ = has_password;
  if (settings.resp == 3) {
    // HELLO authenticates in the same command, since before AUTH it would be
    // refused with NOAUTH.
    RespCommand hello(&request_, has_password ? 5 : 2);
    hello.Arg("HELLO").Arg("3");
    if (has_password) hello.Arg("AUTH").Arg(user_).Arg(settings.password);
    steps_[commands_++] = "HELLO 3 (resp = 3)";
  } else if (has_password) {
    if (settings.username.empty()) {
      RespCommand(&request_, 2).Arg("AUTH").Arg(settings.password);
    } else {
      RespCommand(&request_, 3).Arg("AUTH").Arg(settings.username).Arg(settings.password);
    }
    auth_step_ = "AUTH (" + credentials_prefix_ + "password)";
    steps_[commands_++] = auth_step_;
  }
  if (settings.db != 0) {
    RespCommand(&request_, 2).Arg("SELECT").Arg(settings.db);
    steps_[commands_++] = "SELECT (db)";
  }
  if (!settings.client_name.empty()) {
    RespCommand(&request_, 3).Arg("CLIENT").Arg("SETNAME").Arg(settings.client_name);
    steps_[commands_++] = "CLIENT SETNAME (client_name; empty: not sent)";
  }
  if (commands_ >= 2) {
    RespCommand(&request_, 1).Arg("PING");
    steps_[commands_++] = "PING (closes the login)";
    closed_ = true;
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
    // A reply sent twice would have taken the place of the next one's.
    if (closed_ && answered_ == commands_) return ReadClosingPong(frame, where_, "the login");
    if (frame.IsError() && first_error_.ok()) {
      const Status refused = StatusFromError(frame.text(), where_);
      first_error_ =
          Status::FromCode(refused.code(), std::string(refused.message()) + "; in the login, by " +
                                               std::string(steps_[answered_ - 1]));
      // A refusal of the first command, which carries the credentials (a password
      // sent to a server that has none, say), is the login's failure; a HELLO
      // refused for its protocol version is not.
      if (answered_ == 1 && authenticates_ && !StartsWithWord(frame.text(), "NOPROTO")) {
        first_error_ = Status::AuthFailed(std::string(first_error_.message()));
      }
    }
    return Status::OK();
  });
  if (!s.ok() || !done() || first_error_.ok()) return s;
  if (first_error_.IsAuthFailed()) {
    const std::string& prefix = credentials_prefix_;
    return Status::AuthFailed("redis " + where_ + ": authentication failed for user '" + user_ +
                              "' (check [redis] " + prefix + "username and " + prefix +
                              "password)");
  }
  return first_error_;
}

Status SessionReplies::Consume(net::ReadBuffer& buffer) {
  return TakeFrames(parser_, buffer, connection_, [this](RespValue frame, Frame& next) {
    if (frame.type() == RespType::kPush) [[unlikely]] {
      // The frame views the buffer, which stays put until the next read.
      session_.DeliverPush(frame, connection_.address().HostPort());
    } else if (done()) [[unlikely]] {
      next = Frame::kLeft;  // nobody's reply: left for the leftover rule
    } else {
      on_reply_(index_++, frame);
    }
    return Status::OK();
  });
}

void RedisSession::DeliverPush(RespValue push, std::string_view where) const {
  if (!settings_.on_push) return;
  // While the hook runs, a Redis call on this thread is refused (see Run).
  bool& running = ThreadState(settings_.limits).in_push_hook;
  struct Guard {
    bool& running;
    explicit Guard(bool& flag) : running(flag) {
      running = true;
      hooks_running_.fetch_add(1, std::memory_order_relaxed);
    }
    ~Guard() {
      hooks_running_.fetch_sub(1, std::memory_order_relaxed);
      running = false;
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  } guard(running);
  settings_.on_push(push, where);
}

std::atomic<int> RedisSession::hooks_running_{0};

bool RedisSession::ThreadInPushHook() {
  // A thread's state made here takes default limits; ParserFor applies a
  // session's before its parser is used.
  return ThreadState({}).in_push_hook;
}

Status RedisSession::PushHookRefusal(std::string_view where) {
  return Status::InvalidArgument("redis " + std::string(where) +
                                 ": a push hook (on_push) may not run a Redis command");
}

}  // namespace cachet::redis
