// SingleTextReader: the reply to one text-protocol command sent alone.
//
// The usual replies (a hit, a miss, STORED, DELETED, a counter...) are read by
// the quick recognizers (quick_reply.h) and written straight into the operation
// and the item the caller lent. Anything else hands the same unconsumed bytes to
// a TextBatch holding just this operation, the reader a batch uses, so errors,
// their messages, poisoned connections and protocol errors are decided exactly
// as for a batch. Not thread-safe; one per call.
#pragma once

#include <optional>

#include "cachet/backend.h"
#include "cachet/net/fan_out.h"
#include "reply.h"
#include "server_batch.h"
#include "text_batch.h"

namespace cachet::memcached {

class SingleTextReader final : public net::ReplyReader {
 public:
  // `op` was sent alone with `settings`; a hit's item goes to `*hit`, which is
  // op.result or an Item the caller lends. Both must outlive the reader.
  SingleTextReader(Operation& op, Item* hit, const BatchSettings& settings, ParserLimits limits)
      : op_(op), hit_(hit), settings_(settings), limits_(limits), done_(op.noreply) {}

  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return batch_ ? batch_->done() : done_; }

  // After the exchange, as ServerBatch::Settle: an operation left without a
  // reply takes the exchange's failure; a noreply one takes its outcome.
  // Inline: after a usual reply there is nothing to do.
  void Settle(const Status& transport) {
    if (batch_ || op_.noreply || (!done_ && !transport.ok())) SettleUnusual(transport);
  }
  // True when the reply may have left the connection out of step.
  bool poisoned() const noexcept { return batch_ && batch_->poisoned(); }

 private:
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
