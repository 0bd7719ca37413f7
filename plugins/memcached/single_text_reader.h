// SingleTextReader: the reply to one text-protocol command sent alone.
//
// The usual replies (a hit, a miss, STORED, DELETED, a counter...) are read by
// the quick recognizers (quick_reply.h) and written straight into the operation
// and the item the caller lent. Anything else hands the same unconsumed bytes to
// a TextBatch holding just this operation, the reader a batch uses, so errors,
// their messages, poisoned connections and protocol errors are decided exactly
// as for a batch. Not thread-safe; one per call.
//
// It reads like a net::ReplyReader (Consume, done) without being one: its one
// user, RunSingleExchange, knows its type, so the usual reply is read inline,
// without a virtual call.
#pragma once

#include <optional>

#include "cachet/backend.h"
#include "cachet/net/read_buffer.h"
#include "quick_value.h"
#include "reply.h"
#include "server_batch.h"
#include "text_batch.h"

namespace cachet::memcached {

class SingleTextReader final {
 public:
  // `op` was sent alone with `settings`; a hit's item goes to `*hit`, which is
  // op.result or an Item the caller lends. Both must outlive the reader.
  SingleTextReader(Operation& op, Item* hit, const BatchSettings& settings, ParserLimits limits)
      : op_(op), hit_(hit), settings_(settings), limits_(limits), done_(op.noreply) {}

  // Consumes the reply once whole; an error Status (a protocol error) ends the
  // exchange, as ReplyReader::Consume. What is not (yet) a usual reply is out of
  // line. always_inline: GCC otherwise calls it out of line (docs/performance.md).
  [[gnu::always_inline]] Status Consume(net::ReadBuffer& buffer) {
    if (batch_) return batch_->Consume(buffer);
    const QuickReply quick = op_.kind == OpKind::kGet
                                 ? QuickTextRetrieval(buffer.data(), op_.key, limits_)
                                 : QuickTextLine(buffer.data(), op_.kind, limits_);
    if (quick.outcome != QuickOutcome::kDone) return NotUsualYet(buffer, quick.outcome);
    if (quick.code != StatusCode::kOk) {
      op_.status = Status::FromCode(quick.code, {});
    } else if (op_.kind == OpKind::kGet) {
      // assign() reuses the capacity of the caller's Item.
      hit_->value.assign(quick.data.data(), quick.data.size());
      hit_->flags = quick.flags;
      hit_->cas = quick.cas;
    } else {
      op_.counter = quick.number;
    }
    // Consumed only now: the data viewed the buffer.
    buffer.Consume(buffer.size());
    done_ = true;
    return Status::OK();
  }
  bool done() const noexcept { return batch_ ? batch_->done() : done_; }

  // After the exchange, as ServerBatch::Settle: an operation left without a
  // reply takes the exchange's failure; a noreply one takes its outcome.
  // Inline: after a usual reply there is nothing to do.
  void Settle(const Status& transport) {
    if (batch_ || op_.noreply || !transport.ok()) SettleUnusual(transport);
  }
  // True when the reply may have left the connection out of step.
  bool poisoned() const noexcept { return batch_ && batch_->poisoned(); }

 private:
  // Consume() for a reply the quick recognizers found unfinished (kNeedMore)
  // or unusual.
  Status NotUsualYet(net::ReadBuffer& buffer, QuickOutcome outcome);
  // Hands the reply to the batch reader, from the bytes it begins with.
  Status Fallback(net::ReadBuffer& buffer);
  // Settle() after an unusual reply, a noreply command or a failed exchange.
  void SettleUnusual(const Status& transport);

  Operation& op_;
  Item* hit_;
  BatchSettings settings_;
  ParserLimits limits_;
  bool done_;
  std::optional<TextBatch> batch_;  // only once a reply was unusual
};

}  // namespace cachet::memcached
