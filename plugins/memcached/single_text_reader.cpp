// SingleTextReader: quick replies first, the batch reader for the rest.
#include "single_text_reader.h"

#include <utility>

#include "quick_reply.h"

namespace cachet::memcached {

namespace {

// An unfinished reply this long is a large value's data on its way.
constexpr std::size_t kLargePartialReply = 4096;

}  // namespace

Status SingleTextReader::Consume(net::ReadBuffer& buffer) {
  if (batch_) return batch_->Consume(buffer);
  const QuickReply quick = op_.kind == OpKind::kGet
                               ? QuickTextRetrieval(buffer.data(), op_.key, limits_)
                               : QuickTextLine(buffer.data(), op_.kind, limits_);
  if (quick.outcome == QuickOutcome::kNeedMore) {
    // A large value arriving in pieces is the batch reader's: it can receive
    // the rest straight into the item (net::DirectValue) instead of copying it.
    return buffer.size() < kLargePartialReply ? Status::OK() : Fallback(buffer);
  }
  if (quick.outcome == QuickOutcome::kUnusual) return Fallback(buffer);
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

Status SingleTextReader::Fallback(net::ReadBuffer& buffer) {
  batch_.emplace(limits_);
  batch_->Reset(settings_);
  batch_->Add(op_);
  batch_->Finish();
  // The batch reader fills op.result; the caller's Item lends its place there
  // until Settle.
  if (hit_ != &op_.result) std::swap(op_.result, *hit_);
  return batch_->Consume(buffer);
}

void SingleTextReader::SettleUnusual(const Status& transport) {
  if (batch_) {
    batch_->Settle(transport);
    if (hit_ != &op_.result) std::swap(op_.result, *hit_);
    return;
  }
  // With the text protocol a noreply command's outcome is unknown unless the
  // connection failed.
  if (op_.noreply || (!done_ && !transport.ok())) op_.status = transport;
}

}  // namespace cachet::memcached
