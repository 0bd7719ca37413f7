// SingleTextReader: quick replies first, the batch reader for the rest.
#include "single_text_reader.h"

#include <utility>

namespace cachet::memcached {

namespace {

// An unfinished reply this long is a large value's data on its way.
constexpr std::size_t kLargePartialReply = 4096;

}  // namespace

Status SingleTextReader::NotUsualYet(net::ReadBuffer& buffer, QuickOutcome outcome) {
  if (outcome == QuickOutcome::kNeedMore) {
    // A large value arriving in pieces is the batch reader's: it can receive
    // the rest straight into the item (net::DirectValue) instead of copying it.
    return buffer.size() < kLargePartialReply ? Status::OK() : Fallback(buffer);
  }
  return Fallback(buffer);
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
  // After a protocol error (a reply too many included) the reply that was read
  // may not be this command's.
  if (op_.noreply || (!done_ && !transport.ok()) || transport.IsProtocolError()) {
    op_.status = transport;
  }
}

}  // namespace cachet::memcached
