// RedisBatch: one server's share of a pipelined batch of mixed operations.
//
// Add() encodes each operation as one command into the request; as a
// net::ReplyReader it then parses the replies as they arrive (no I/O of its own)
// and writes each one's outcome into its Operation, in order. Append, prepend,
// cas and memcached-style counters are script calls by SHA in the same round
// trip, each script preceded once by a SCRIPT LOAD so that a server without it
// still runs the batch whole and in order; calls answered NOSCRIPT all the same
// are listed for the caller to repeat one by one (which sends the script in
// full). Operations that need no round trip (a counter delta Redis cannot take)
// are settled at Add() time.
// Settle() marks the operations whose replies never came with the exchange's
// error, so a dead server is an error, never a miss.
// A batch of two replies or more ends with PING: RESP replies carry no mark of
// their command, so a reply sent twice would stand in for the next one, whose
// own would arrive after the batch as the answer to the connection's next
// command; with PING last, it arrives where PONG belongs and fails the batch.
// Operations answered with a cluster redirection (MOVED, ASK, TRYAGAIN,
// CLUSTERDOWN) are listed with the error's text, for the cluster router to retry.
// RESP3 pushes before, between and right after the replies go to the session's
// push hook (RedisSession::DeliverPush), never to an operation.
// Not thread-safe: one batch per server per call.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/batch_runner.h"
#include "direct_bulk.h"
#include "lua_scripts.h"
#include "redis_commands.h"
#include "redis_session.h"
#include "resp_frames.h"
#include "resp_parser.h"

namespace cachet::redis {

class RedisBatch final : public net::ServerBatch {
 public:
  // `session` (borrowed; null: none) gets the RESP3 pushes met between replies.
  RedisBatch(std::string where, RespLimits limits, CounterMode counters,
             const RedisSession* session = nullptr)
      : where_(std::move(where)), parser_(limits), counters_(counters), session_(session) {}

  // Room for `operations` operations, so that adding them does not grow the
  // list as it goes (a SCRIPT LOAD takes a place of its own).
  void Reserve(std::size_t operations) { sent_.reserve(operations); }
  // Encodes `op` into the request; false when it was settled here and sends nothing.
  bool Add(Operation& op);
  // Closes the request once every operation is in: PING when two replies or
  // more are to come.
  void Seal();
  const std::string& request() const noexcept { return request_; }
  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }
  bool empty() const noexcept { return sent_.empty(); }
  bool reads_only() const noexcept override { return !writes_; }

  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return next_ == sent_.size() + (sealed_ ? 1 : 0); }

  // After the exchange: `status` of the exchange for operations left unanswered.
  void Settle(const Status& status) override;
  // Operations answered NOSCRIPT: the caller runs them again one by one.
  const std::vector<Operation*>& needs_script() const noexcept { return needs_script_; }

  struct Redirected {
    Operation* op;
    std::string error;  // the error reply's text, e.g. "MOVED 3999 127.0.0.1:7001"
  };
  const std::vector<Redirected>& redirected() const noexcept { return redirected_; }
  // The commands whose replies were read and paired with them, in request
  // order (null for a SCRIPT LOAD); after Settle(). None after an exchange
  // that failed: its replies may be out of step with the commands.
  std::span<Operation* const> answered() const noexcept { return {sent_.data(), answered_}; }

 private:
  // One reply of the batch's (or a push) from the frame loop (resp_frames.h).
  Status Take(RespValue reply, Frame& next);
  // Lists an operation answered with an error the caller acts on.
  void NoteError(Operation& op, std::string_view error);
  // Puts SCRIPT LOAD of `script` in the request unless this batch already has.
  void LoadScriptOnce(const LuaScript& script);

  std::string where_;
  RespParser parser_;
  DirectBulk direct_;  // a GET's large value, received straight into its string
  std::string request_;
  std::vector<Operation*> sent_;  // in request order; null for a SCRIPT LOAD
  bool writes_ = false;           // an operation other than a get was added
  bool sealed_ = false;           // PING follows sent_'s commands
  std::vector<const LuaScript*> loaded_;
  std::vector<Operation*> needs_script_;
  std::vector<Redirected> redirected_;
  std::size_t next_ = 0;
  std::size_t answered_ = 0;  // Settle(): how many of sent_ kept their replies
  CounterMode counters_;
  const RedisSession* session_;  // the push hook's; may be null
};

}  // namespace cachet::redis
