// MgetBatch: one server's share of a batch made only of reads, sent as one MGET.
//
// For small values most of a server's work per key is running a command, so
// one MGET of N keys is far cheaper for it than N pipelined GETs (and for the
// client, one reply header instead of N). The reply, an array of bulk strings
// and nils, is read as it arrives: the array header first, then each element,
// so a large reply never has to be in the buffer whole and every value is
// handed to its operation at once. An element already whole in the buffer is
// read straight off (whole_bulk.h); any other is read by the parser as a reply
// of its own; a large value's data is received straight into its operation's
// string (direct_bulk.h).
// An error reply instead of the array settles every read with that error.
// One difference from GET: MGET answers nil, where GET answers WRONGTYPE, for a
// key that holds another Redis type (a list, a hash...), so such a key is a miss
// in a get_multi. Not used in cluster mode (MGET would need one slot).
// RESP3 pushes before and right after the array go to the session's push hook
// (RedisSession::DeliverPush); one inside the array is a protocol error.
// Not thread-safe: one batch per server per call.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/batch_runner.h"
#include "direct_bulk.h"
#include "redis_session.h"
#include "resp_frames.h"
#include "resp_parser.h"

namespace cachet::redis {

class MgetBatch final : public net::ServerBatch {
 public:
  // `session` (borrowed; null: none) gets the RESP3 pushes met before and after the reply.
  MgetBatch(std::string where, RespLimits limits, const RedisSession* session = nullptr)
      : where_(std::move(where)), limits_(limits), parser_(limits), session_(session) {}

  // Room for `reads` reads, so that adding them does not grow the list as it goes.
  void Reserve(std::size_t reads) { reads_.reserve(reads); }
  // REQUIRES: op.kind == OpKind::kGet, and Seal() not called yet.
  void Add(Operation& op) { reads_.push_back(&op); }
  // Add() of each of `ops`, in order, in one copy.
  void Add(std::span<Operation* const> ops) { reads_.insert(reads_.end(), ops.begin(), ops.end()); }
  // Encodes the MGET of every added key; call once, after the last Add().
  void Seal();
  // The encoded MGET, once sealed.
  std::string_view request() const noexcept { return {request_.get(), request_size_}; }
  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{request_.get(), request_size_});
  }
  bool empty() const noexcept { return reads_.empty(); }
  bool reads_only() const noexcept override { return true; }

  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return answered_ == reads_.size(); }

  // After the exchange: `status` of the exchange for reads left unanswered.
  void Settle(const Status& status) override;

 private:
  // The array header (or an error in its place). Sets *complete when read.
  Status ConsumeHeader(net::ReadBuffer& buffer, bool* complete);
  // A whole non-array reply in place of the array: an error for every read.
  Status ConsumeInstead(net::ReadBuffer& buffer, bool* complete);
  // One element (or a push after the array) from the frame loop (resp_frames.h).
  Status Take(RespValue frame, Frame& next);
  // A push met before or after the array, to the session's hook.
  void Push(RespValue push) const;
  // Answers reads from the whole bulk strings and nils at the front of `buffer`
  // (whole_bulk.h), stopping at the first element it leaves to the parser.
  // REQUIRES: the header read, the parser idle and no direct read under way.
  void ConsumeWholeElements(net::ReadBuffer& buffer);

  std::string where_;
  RespLimits limits_;
  RespParser parser_;
  DirectBulk direct_;
  std::unique_ptr<char[]> request_;
  std::size_t request_size_ = 0;
  std::vector<Operation*> reads_;
  bool header_read_ = false;
  std::size_t answered_ = 0;
  const RedisSession* session_;  // the push hook's; may be null
};

}  // namespace cachet::redis
