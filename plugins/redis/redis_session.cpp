// Connecting, the handshake, and one exchange of pipelined replies for one Redis server.
#include "redis_session.h"

#include <sys/uio.h>

#include <string>

#include "cachet/net/exchange.h"
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

Status RedisSession::Exchange(net::Connection& connection, std::string_view request,
                              std::size_t reply_count, net::Deadline deadline,
                              ReplyHandler on_reply) const {
  if (Status s = Prepare(connection, deadline); !s.ok()) return s;
  return Run(connection, request, reply_count, deadline, on_reply);
}

Status RedisSession::Run(net::Connection& connection, std::string_view request,
                         std::size_t reply_count, net::Deadline deadline,
                         ReplyHandler on_reply) const {
  PerThread& mine = ThreadState(settings_.limits);
  // The outer exchange's parser is mid-stream while its push hook runs.
  if (mine.in_push_hook) [[unlikely]] {
    return Status::InvalidArgument("redis " + connection.address().HostPort() +
                                   ": a push hook (on_push) may not run a Redis command");
  }
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
  if (Status s = connection.EnsureConnected(deadline); !s.ok()) return s;
  Status s = Handshake(connection, deadline);
  if (!s.ok()) connection.Close();
  return s;
}

Status RedisSession::Handshake(net::Connection& connection, net::Deadline deadline) const {
  std::string request;
  std::size_t commands = 0;
  bool has_password = !settings_.password.empty();
  const std::string& user = settings_.username.empty() ? kDefaultUser : settings_.username;
  if (settings_.resp == 3) {
    // HELLO authenticates in the same command, since before AUTH it would be
    // refused with NOAUTH.
    RespCommand hello(&request, has_password ? 5 : 2);
    hello.Arg("HELLO").Arg("3");
    if (has_password) hello.Arg("AUTH").Arg(user).Arg(settings_.password);
    ++commands;
  } else if (has_password) {
    if (settings_.username.empty()) {
      RespCommand(&request, 2).Arg("AUTH").Arg(settings_.password);
    } else {
      RespCommand(&request, 3).Arg("AUTH").Arg(settings_.username).Arg(settings_.password);
    }
    ++commands;
  }
  if (settings_.db != 0) {
    RespCommand(&request, 2).Arg("SELECT").Arg(settings_.db);
    ++commands;
  }
  if (!settings_.client_name.empty()) {
    RespCommand(&request, 3).Arg("CLIENT").Arg("SETNAME").Arg(settings_.client_name);
    ++commands;
  }
  if (commands == 0) return Status::OK();
  Status first_error;
  std::string where = connection.address().HostPort();
  Status s = Run(connection, request, commands, deadline, [&](std::size_t, RespValue reply) {
    if (!reply.IsError() || !first_error.ok()) return;
    first_error = StatusFromError(reply.text(), where);
  });
  if (!s.ok()) return s;
  if (first_error.IsAuthFailed()) {
    return Status::AuthFailed("redis " + where + ": authentication failed for user '" + user +
                              "' (check [redis] username and password)");
  }
  return first_error;
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
