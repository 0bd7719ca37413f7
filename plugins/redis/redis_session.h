// RedisSession: request/reply exchanges with one Redis server over a pooled
// net::Connection, including the handshake a fresh connection needs.
//
// A connection that is not connected yet (new, dropped after an error, or
// inherited across fork) is connected and logged in before its first request
// (RedisLogin): HELLO 3 when resp = 3, AUTH [username] password, SELECT db and
// CLIENT SETNAME, all pipelined in one round trip. The engine runs it as a
// net::ConnectionSetup: alone before a single call's exchange (net::CallServer),
// or, for a batch, all at once as the first step of each exchange in its poll
// loop. A wrong password is kAuthFailed; the password itself is never part of
// a message.
//
// Call() leases a connection of a pool (net::CallServer) and runs one exchange
// on it; Run() runs one on a connection the caller holds. An exchange writes
// one buffer holding `reply_count` commands, then reads that many replies in
// order and hands each to a callback: the core's lone driver
// (cachet/net/exchange.h), with SessionReplies as its reader. Any
// transport failure, malformed reply, or byte after the last reply closes the
// connection, so the next use starts clean. Every wait ends after the
// connection's io_timeout of silence, or at the call's deadline. RESP3 pushes
// that arrive between replies go to SessionSettings::on_push, never to a command.
// Stateless apart from its settings: safe to share between threads.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cachet/net/batch_runner.h"
#include "cachet/net/connection.h"
#include "cachet/net/lone_call.h"
#include "cachet/net/server_pool.h"
#include "cachet/status.h"
#include "function_ref.h"
#include "resp_parser.h"

namespace cachet::redis {

// Called with each RESP3 push frame (`>`) a session's exchange meets between
// replies, and `where` ("host:port") it came from. Rules for the hook:
//   - `push` is a view into the connection's buffer and the thread's parser,
//     valid only during the call: copy what you keep;
//   - it runs in the middle of an exchange, on the calling thread: it must not
//     call into a store there (a Redis exchange on that thread is refused with
//     invalid_argument; hand the work to another thread instead);
//   - every exchange of the session's data connections calls it: single
//     calls (SessionReplies), batches (RedisBatch, MgetBatch) and commands to
//     every server (each_server.h); a login's replies drop pushes.
// An extension point: no cachet component sets it yet, so pushes are dropped.
using PushHandler = std::function<void(RespValue push, std::string_view where)>;

struct SessionSettings {
  int resp = 2;             // 2 or 3 (RESP3 push frames are a protocol error on 2)
  std::string username;     // ACL user; empty: the default user
  std::string password;     // empty: no AUTH
  // Before "username" and "password" in a refused login's message: the settings
  // of these credentials ("sentinel_" for the sentinels' own).
  const char* credentials_prefix = "";
  std::int64_t db = 0;      // SELECT when not 0
  std::string client_name;  // CLIENT SETNAME when not empty
  RespLimits limits;        // limits.resp3 is set by RedisSession from `resp`
  // Pushes met on this session's connections; empty: they are dropped. The data
  // connections subscribe to nothing, but a server may push (RESP3) anyway.
  PushHandler on_push;
};

// Called with each reply in order; a non-ok Status is that reply's outcome and is
// kept, but does not stop the reading (the replies must all be read anyway).
// Called only while Run() runs, so a reference to the caller's lambda does.
using ReplyHandler = FunctionRef<void(std::size_t index, RespValue reply)>;

// How a call to one server went (RedisSession::Call).
struct CallOutcome {
  Status transport;   // the lease, connect, login, send and read: ok when every reply was read
  Status reply;       // the last reply's outcome, as the caller settled it
  bool sent = false;  // the request began to go out: after a failure it may have run
  // The call's outcome: the transport's failure, else the reply's.
  Status status() && { return transport.ok() ? std::move(reply) : std::move(transport); }
};

class RedisSession;

// The replies of one exchange, fed bytes (a reader of cachet/net/exchange.h):
// `count` replies in order to `on_reply`, and every whole push frame before,
// between or right after them (in the same read as the last reply) to the
// session's push hook (RedisSession::DeliverPush), which is no reply to a
// command. A push that arrives later, or only partly with the last reply, is
// the exchange's leftover error or fails the pool's idle check: the
// connection is closed, not the hook called.
class SessionReplies {
 public:
  // `parser` idle; `connection` words protocol errors. All borrowed.
  SessionReplies(RespParser& parser, const net::Connection& connection, std::size_t count,
                 ReplyHandler on_reply, const RedisSession& session)
      : parser_(parser),
        connection_(connection),
        count_(count),
        on_reply_(on_reply),
        session_(session) {}

  // Consumes every whole reply and push at the front of `buffer`; a reply
  // past the last expected one is left there (the exchange's leftover error).
  Status Consume(net::ReadBuffer& buffer);
  bool done() const noexcept { return index_ == count_; }

 private:
  RespParser& parser_;
  const net::Connection& connection_;
  const std::size_t count_;
  std::size_t index_ = 0;
  ReplyHandler on_reply_;
  const RedisSession& session_;
};

// The login of a connection connected anew, as one pipelined request, and the
// reader of its replies (a net::Login, fed bytes): every reply is read, then
// the first error reply is the login's error (a wrong password: kAuthFailed,
// saying what to check; the password never shows). Pushes are dropped.
class RedisLogin final : public net::Login {
 public:
  // The login `settings` ask of a connection to `where` ("host:port");
  // empty() when they ask nothing (no password, database 0, no name, RESP2).
  RedisLogin(const SessionSettings& settings, std::string where);
  RedisLogin(const RedisLogin&) = delete;  // steps_ may point into auth_step_
  RedisLogin& operator=(const RedisLogin&) = delete;

  bool empty() const noexcept { return commands_ == 0; }
  iovec* Request(int* count) override {
    piece_ = {request_.data(), request_.size()};
    *count = 1;
    return &piece_;
  }
  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return answered_ == commands_; }

 private:
  std::string where_;
  std::string user_;  // the ACL user, for the message of a refused login
  std::string request_;
  iovec piece_{};
  std::size_t commands_ = 0;
  std::size_t answered_ = 0;
  // Each login command, and the setting that asks for it, for an error's message.
  std::string_view steps_[4];
  bool closed_ = false;  // a PING follows two login commands or more (RedisBatch's reason)
  std::string credentials_prefix_;  // SessionSettings::credentials_prefix
  std::string auth_step_;           // "AUTH (<prefix>password)", which steps_ may point to
  RespParser parser_;
  Status first_error_;  // the first error reply
  bool authenticates_ = false;  // the first command carries the credentials
};

class RedisSession final : public net::ConnectionSetup {
 public:
  // The parser limits follow `resp`: pushes are accepted on RESP3 only.
  explicit RedisSession(SessionSettings settings) : settings_(std::move(settings)) {
    settings_.limits.resp3 = settings_.resp == 3;
  }

  // Sends `request` (`reply_count` commands) on the connected `connection`,
  // which the caller holds, and reads every reply by `deadline`.
  Status Run(net::Connection& connection, std::string_view request, std::size_t reply_count,
             net::Deadline deadline, ReplyHandler on_reply) const;

  // One request to `server` of `pool`, by `deadline` (computed at `start`),
  // through net::CallServer. `settle(index, reply)` gives each reply's outcome;
  // a protocol_error (a reply of the wrong kind) closes the connection. Refused
  // inside a push hook, with no connection leased. A template, so that each
  // router's `settle` is inlined, as CallServer inlines its exchange. A read
  // (`repeatable`) may go twice: see net::CallServer.
  template <class SettleReply>
  CallOutcome Call(net::ServerPool& pool, std::size_t server, std::string_view request,
                   std::size_t reply_count, net::Clock::time_point start, net::Deadline deadline,
                   SettleReply&& settle,
                   net::Repeatable repeatable = net::Repeatable::kNo) const {
    CallOutcome outcome;
    if (InPushHook()) [[unlikely]] {
      outcome.transport = PushHookRefusal(pool.address(server).HostPort());
      return outcome;
    }
    auto exchange = [&](net::Connection& connection, net::Clock::time_point began) {
      outcome.sent = true;
      Status out_of_step;  // the first reply of the wrong kind
      Status s = Exchange(connection, request, reply_count, began, deadline,
                          [&](std::size_t index, RespValue reply) {
                            outcome.reply = settle(index, reply);
                            if (outcome.reply.IsProtocolError() && out_of_step.ok()) [[unlikely]]
                              out_of_step = outcome.reply;
                          });
      // A reply of the wrong kind: the stream is out of step, which counts
      // against the server as any protocol error does.
      if (!out_of_step.ok()) [[unlikely]] {
        connection.Close();
        if (s.ok()) s = std::move(out_of_step);
      }
      return s;
    };
    constexpr auto kUse = net::ServerPool::Use::kReadsReplies;
    outcome.transport =
        repeatable == net::Repeatable::kYes
            ? net::CallServer<net::Repeatable::kYes>(pool, server, kUse, start, deadline, this,
                                                     exchange)
            : net::CallServer(pool, server, kUse, start, deadline, this, exchange);
    return outcome;
  }

  // Connects and logs in if `connection` is not connected, by `deadline`
  // (a dedicated link's own connection, outside any pool).
  Status Prepare(net::Connection& connection, net::Deadline deadline) const;

  // The login of a connection connected anew (net::CallServer runs it alone,
  // net::BatchRunner in its poll loop), or null when nothing needs sending.
  std::unique_ptr<net::Login> NewLogin(const net::Connection& connection) const override;

  const SessionSettings& settings() const noexcept { return settings_; }

  // Hands `push`, a RESP3 push frame an exchange with `where` met between
  // replies (a single call's or a batch's), to settings().on_push, if set.
  // While the hook runs, a Redis call on this thread is refused (InPushHook).
  void DeliverPush(RespValue push, std::string_view where) const;
  // True while a push hook runs on the calling thread (any session's): a
  // Redis call made now would read its replies with a parser that is mid-stream.
  // Inline: every call asks, and while no hook runs anywhere the count says no.
  static bool InPushHook() {
    return hooks_running_.load(std::memory_order_relaxed) != 0 && ThreadInPushHook();
  }
  // The refusal of a Redis call made inside a push hook, naming `where`.
  static Status PushHookRefusal(std::string_view where);

 private:
  // Run's and Call's exchange on the connected `connection`, begun at `began`.
  Status Exchange(net::Connection& connection, std::string_view request, std::size_t reply_count,
                  net::Clock::time_point began, net::Deadline deadline,
                  ReplyHandler on_reply) const;

  // The calling thread's own flag (InPushHook, once some hook runs somewhere).
  static bool ThreadInPushHook();

  // Push hooks running now, on any thread; a thread sets its own flag before
  // it counts itself, so while this is 0 no thread is inside a hook.
  static std::atomic<int> hooks_running_;

  SessionSettings settings_;
};

// Maps a Redis error reply's text to a Status: WRONGPASS/NOAUTH to auth_failed,
// WRONGTYPE and ERR to invalid_argument, LOADING/BUSY/MASTERDOWN/CLUSTERDOWN/
// TRYAGAIN to unavailable, anything else to invalid_argument. `where` is
// "host:port" for the message.
Status StatusFromError(std::string_view error, std::string_view where);
// Whether an error reply's text begins with the word `word` (its code: "BUSY",
// not "BUSYKEY").
inline bool StartsWithWord(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

}  // namespace cachet::redis
