// Connecting, the handshake, and reading pipelined replies for one Redis server.
#include "redis_session.h"

#include <sys/uio.h>

#include <string>

#include "resp_encoder.h"

namespace cachet::redis {

namespace {

const std::string kDefaultUser = "default";

bool StartsWithWord(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

// Nothing is allocated per exchange once these have grown. One thread may serve
// several backends, each with its own limits: the parser takes the caller's.
RespParser& ThreadParser(const RespLimits& limits) {
  // One thread_local object, not two: each costs a TLS lookup per call here.
  struct PerThread {
    explicit PerThread(const RespLimits& first) : parser(first), applied(first) {}
    RespParser parser;
    RespLimits applied;
  };
  thread_local PerThread mine(limits);
  if (!(mine.applied == limits)) {
    mine.parser.set_limits(limits);
    mine.applied = limits;
  }
  return mine.parser;
}

// One non-blocking send covers any request that fits the socket buffer (nearly
// all of them) without building WriteAll's gather list; a rest waits for room.
Status WriteRequest(net::Connection& connection, std::string_view request, net::Deadline deadline) {
  iovec piece{const_cast<char*>(request.data()), request.size()};
  iovec* iov = &piece;
  int count = 1;
  if (Status s = connection.WriteSome(&iov, &count); !s.ok() || count == 0) return s;
  std::string_view rest[] = {{static_cast<const char*>(piece.iov_base), piece.iov_len}};
  return connection.WriteAll(rest, deadline);
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
  Status s = WriteRequest(connection, request, deadline);
  if (s.ok()) s = ReadReplies(connection, reply_count, deadline, on_reply);
  if (!s.ok()) connection.Close();
  return s;
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
  std::string_view pieces[] = {request};
  if (Status s = connection.WriteAll(pieces, deadline); !s.ok()) return s;
  Status first_error;
  std::string where = connection.address().HostPort();
  Status s = ReadReplies(connection, commands, deadline, [&](std::size_t, RespValue reply) {
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

Status RedisSession::ReadReplies(net::Connection& connection, std::size_t reply_count,
                                 net::Deadline deadline, ReplyHandler on_reply) const {
  RespParser& parser = ThreadParser(settings_.limits);
  // A previous exchange may have stopped in the middle of a reply or on an error.
  if (!parser.idle()) parser.Reset();
  net::ReadBuffer& buffer = connection.buffer();
  std::size_t index = 0;
  // Each round either completes a reply or reads more bytes before the deadline.
  while (index < reply_count) {
    // Nothing to parse yet (the usual state right after sending): read first.
    if (buffer.empty()) {
      if (Status s = connection.ReadMore(deadline); !s.ok()) return s;
      continue;
    }
    switch (parser.Parse(buffer.data())) {
      case RespParser::Outcome::kReply:
        // Out-of-band RESP3 pushes are not replies to our commands.
        if (parser.reply().root().type() != RespType::kPush)
          on_reply(index++, parser.reply().root());
        buffer.Consume(parser.consumed());
        break;
      case RespParser::Outcome::kNeedMore:
        if (Status s = connection.ReadMore(deadline); !s.ok()) return s;
        break;
      case RespParser::Outcome::kError:
        return Status::ProtocolError(connection.Describe(parser.error().message()));
    }
  }
  // Bytes after the replies are nobody's answer (cachet subscribes to no
  // pushes): the next request would read them as its own.
  return buffer.empty() ? Status::OK() : connection.LeftoverError();
}

}  // namespace cachet::redis
