// RedisSession: request/reply exchanges with one Redis server over a pooled
// net::Connection, including the handshake a fresh connection needs.
//
// A connection that is not connected yet (new, dropped after an error, or
// inherited across fork) is connected and set up before its first request:
// HELLO 3 when resp = 3, AUTH [username] password, SELECT db and CLIENT SETNAME,
// all pipelined in one round trip. A wrong password is kAuthFailed; the password
// itself is never part of a message.
//
// Exchange() writes one buffer holding `reply_count` commands, then reads that
// many replies in order and hands each to a callback. Any transport failure,
// malformed reply, or byte after the last reply closes
// the connection, so the next use starts clean. Every wait ends after the
// connection's io_timeout of silence, or at the call's deadline.
// Stateless apart from its settings: safe to share between threads.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cachet/net/batch_runner.h"
#include "cachet/net/connection.h"
#include "cachet/status.h"
#include "function_ref.h"
#include "resp_parser.h"

namespace cachet::redis {

struct SessionSettings {
  int resp = 2;             // 2 or 3
  std::string username;     // ACL user; empty: the default user
  std::string password;     // empty: no AUTH
  std::int64_t db = 0;      // SELECT when not 0
  std::string client_name;  // CLIENT SETNAME when not empty
  RespLimits limits;
};

// Called with each reply in order; a non-ok Status is that reply's outcome and is
// kept, but does not stop the reading (the replies must all be read anyway).
// Called only while Exchange() runs, so a reference to the caller's lambda does.
using ReplyHandler = FunctionRef<void(std::size_t index, RespValue reply)>;

class RedisSession final : public net::ConnectionSetup {
 public:
  explicit RedisSession(SessionSettings settings) : settings_(std::move(settings)) {}

  // Sends `request` (`reply_count` commands) and reads every reply, by
  // `deadline` (the call's end).
  Status Exchange(net::Connection& connection, std::string_view request, std::size_t reply_count,
                  net::Deadline deadline, ReplyHandler on_reply) const;

  // Connects and runs the handshake if `connection` is not connected, by
  // `deadline`; net::BatchRunner calls it before a batch's exchange.
  Status Prepare(net::Connection& connection, net::Deadline deadline) const override;

  const SessionSettings& settings() const noexcept { return settings_; }

 private:
  Status Handshake(net::Connection& connection, net::Deadline deadline) const;
  Status ReadReplies(net::Connection& connection, std::size_t reply_count, net::Deadline deadline,
                     ReplyHandler on_reply) const;

  SessionSettings settings_;
};

// Maps a Redis error reply's text to a Status: WRONGPASS/NOAUTH to auth_failed,
// WRONGTYPE and ERR to invalid_argument, LOADING/BUSY/MASTERDOWN/CLUSTERDOWN/
// TRYAGAIN to unavailable, anything else to invalid_argument. `where` is
// "host:port" for the message.
Status StatusFromError(std::string_view error, std::string_view where);

}  // namespace cachet::redis
