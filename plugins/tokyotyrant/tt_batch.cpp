// TtServerBatch: encoding a batch and applying its replies (see tt_batch.h).
#include "tt_batch.h"

#include <algorithm>
#include <limits>

#include "tt_request.h"

namespace cachet::tokyotyrant {

void TtServerBatch::Reset() {
  writes_ = false;
  request_.clear();
  gets_.clear();
  pending_gets_ = 0;
  expected_.clear();
  noreply_.clear();
  next_ = 0;
  started_ = false;
  poisoned_ = false;
  silent_tail_ = false;
}

void TtServerBatch::Finish() {
  FlushGets();
  // With no reply expected at all the exchange only sends; otherwise a reply
  // arriving while the putnr bytes still go out would end it early.
  if (!silent_tail_ || expected_.empty()) return;
  if (EncodeBare(Command::kRnum, &request_).ok()) expected_.push_back({ReplyShape::kUint64});
  silent_tail_ = false;
}

void TtServerBatch::Add(Operation& op) {
  if (op.kind == OpKind::kGet) {
    gets_.push_back(&op);
    ++pending_gets_;
    return;
  }
  writes_ = true;
  FlushGets();  // replies come back in request order, so keep the batch's order
  switch (op.kind) {
    case OpKind::kStore:
      return AddStore(op);
    case OpKind::kRemove:
      return Expect(ReplyShape::kStatus, &op, EncodeKeyCommand(Command::kOut, op.key, &request_));
    case OpKind::kIncr:
    case OpKind::kDecr:
      return AddCounter(op);
    default:
      op.status = Status::Internal("tokyotyrant: operation not routed to a batch");
  }
}

void TtServerBatch::AddStore(Operation& op) {
  switch (op.mode) {
    case StoreMode::kSet:
      if (op.noreply) {
        // putnr has no reply and is never awaited: it succeeded if the
        // exchange went out (Settle), so a write never sent is never ok.
        op.status = EncodeStore(Command::kPutNr, op.key, op.item.value, &request_);
        if (op.status.ok()) {
          noreply_.push_back(&op);
          silent_tail_ = true;
        }
        return;
      }
      return Expect(ReplyShape::kStatus, &op,
                    EncodeStore(Command::kPut, op.key, op.item.value, &request_));
    case StoreMode::kAdd:
      return Expect(ReplyShape::kStatus, &op,
                    EncodeStore(Command::kPutKeep, op.key, op.item.value, &request_));
    case StoreMode::kAppend:
      return Expect(ReplyShape::kStatus, &op,
                    EncodeStore(Command::kPutCat, op.key, op.item.value, &request_));
    default:
      op.status = Status::Internal("tokyotyrant: store mode not routed to a batch");
  }
}

void TtServerBatch::AddCounter(Operation& op) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max());
  if (op.delta > kMax) {
    // Unsupported, not invalid_argument: that is the store's word for a value
    // it cannot count, which sends the envelope looking for one.
    op.status = Status::Unsupported(
        "tokyotyrant: counters are 32-bit; a delta above 2147483647 is refused");
    return;
  }
  const auto delta = static_cast<std::int32_t>(op.delta);
  const std::int32_t num = op.kind == OpKind::kIncr ? delta : -delta;
  Expect(ReplyShape::kInt32, &op, EncodeAddInt(op.key, num, &request_));
}

void TtServerBatch::Expect(ReplyShape shape, Operation* op, Status encoded) {
  if (!encoded.ok()) {
    op->status = std::move(encoded);
    return;
  }
  expected_.push_back({shape, op, 0, 0});
  silent_tail_ = false;
}

void TtServerBatch::FlushGets() {
  while (pending_gets_ > 0) {
    const std::size_t first = gets_.size() - pending_gets_;
    if (pending_gets_ == 1) {
      Operation& op = *gets_[first];
      Expect(ReplyShape::kBytes, &op, EncodeKeyCommand(Command::kGet, op.key, &request_));
      pending_gets_ = 0;
      return;
    }
    const std::size_t count = std::min(pending_gets_, options_.mget_max_keys);
    keys_.clear();
    for (std::size_t i = first; i < first + count; ++i) keys_.push_back(gets_[i]->key);
    // Keys were checked against the limits, so encoding cannot fail.
    Status s = EncodeMget(keys_, &request_);
    if (!s.ok()) {
      for (std::size_t i = first; i < first + count; ++i) gets_[i]->status = s;
    } else {
      expected_.push_back({ReplyShape::kKeyValueList, nullptr, first, count});
      silent_tail_ = false;
    }
    pending_gets_ -= count;
  }
}

Status TtServerBatch::Consume(net::ReadBuffer& buffer) {
  // Bounded by the replies expected: each pass finishes one or returns.
  while (next_ < expected_.size()) {
    const Expected& e = expected_[next_];
    if (!started_) {
      parser_.Start(e.shape);
      started_ = true;
    }
    const ParseState state = parser_.Parse(buffer.data());
    if (state == ParseState::kNeedMore) return Status::OK();
    if (state == ParseState::kError) {
      poisoned_ = true;
      return parser_.error();
    }
    Apply(e, buffer.data());
    buffer.Consume(parser_.consumed());
    started_ = false;
    ++next_;
    if (poisoned_) return Status::ProtocolError("tokyotyrant: a reply that does not fit its request");
  }
  return Status::OK();
}

void TtServerBatch::Apply(const Expected& e, std::string_view buffer) {
  const Reply& r = parser_.reply();
  if (e.shape == ReplyShape::kUint64) {
    // The closing rnum: its count is nobody's; ttserver never fails it.
    if (!r.ok) poisoned_ = true;
    return;
  }
  if (e.op == nullptr) return ApplyMget(e, buffer);
  Operation& op = *e.op;
  switch (op.kind) {
    case OpKind::kGet:
      if (!r.ok) {
        op.status = Status::NotFound();
        return;
      }
      op.result.value.assign(r.Field(buffer, 0));
      op.result.flags = 0;
      op.result.cas = 0;
      op.status = Status::OK();
      return;
    case OpKind::kStore:
      // putkeep's 01 is a present key; put's and putcat's, a write that failed.
      op.status = r.ok                          ? Status::OK()
                  : op.mode == StoreMode::kAdd ? Status::NotStored()
                                                : Status::IoError(
                                                      Where() +
                                                      "the server failed to store the value "
                                                      "(status 01)");
      return;
    case OpKind::kRemove:
      op.status = r.ok ? Status::OK() : Status::NotFound();
      return;
    case OpKind::kIncr:
    case OpKind::kDecr:
      if (!r.ok) {
        op.status = Status::InvalidArgument(
            Where() + "addint refused: the value is not a 4-byte binary counter");
        return;
      }
      // A negative counter reads as its two's complement, as documented.
      op.counter = static_cast<std::uint64_t>(static_cast<std::int64_t>(r.int32));
      op.status = Status::OK();
      return;
    default:
      op.status = Status::Internal("tokyotyrant: reply for an unknown operation");
  }
}

void TtServerBatch::ApplyMget(const Expected& e, std::string_view buffer) {
  const Reply& r = parser_.reply();
  if (!r.ok) {
    // ttserver never fails an mget: the stream is out of step.
    poisoned_ = true;
    for (std::size_t i = e.first_get; i < e.first_get + e.get_count; ++i) {
      gets_[i]->status = Status::ProtocolError(Where() + "mget answered with a failure");
    }
    return;
  }
  // Hits come back in request order (duplicates repeated, misses left out), so
  // one walk over the gets pairs each hit with its operation.
  std::size_t hit = 0;
  const std::size_t hits = r.fields.size() / 2;
  for (std::size_t i = e.first_get; i < e.first_get + e.get_count; ++i) {
    Operation& op = *gets_[i];
    if (hit < hits && r.Field(buffer, 2 * hit) == op.key) {
      op.result.value.assign(r.Field(buffer, 2 * hit + 1));
      op.result.flags = 0;
      op.result.cas = 0;
      op.status = Status::OK();
      ++hit;
    } else {
      op.status = Status::NotFound();
    }
  }
  if (hit != hits) {
    // A hit that matches no requested key in order: the stream cannot be trusted.
    poisoned_ = true;
    for (std::size_t i = e.first_get; i < e.first_get + e.get_count; ++i) {
      gets_[i]->status = Status::ProtocolError(Where() + "mget reply out of request order");
    }
  }
}

void TtServerBatch::Settle(const Status& transport) {
  // A reply too large to read is its operation's; the connection went with the
  // rest, which the server may have run: their outcome is unknown.
  const Status unknown =
      transport.IsTooLarge()
          ? Status::IoError(Where() +
                            "not answered: the connection was dropped after a reply too large "
                            "to read; the operation may have been applied")
          : transport;
  for (Operation* op : noreply_) op->status = unknown;
  // Replies are paired with requests by position: after a protocol error (a
  // reply too many included), or an exchange that ended early (a reply
  // skipped, then a timeout, a close or a reply too large to read), any of
  // them may be another request's.
  const std::size_t first = transport.ok() ? next_ : 0;
  for (std::size_t i = first; i < expected_.size(); ++i) {
    const Expected& e = expected_[i];
    const Status failure = transport.ok()  ? Status::ProtocolError(Where() + "reply missing")
                           : i == next_    ? transport
                                           : unknown;
    if (e.op != nullptr) {
      e.op->status = failure;
      continue;
    }
    for (std::size_t g = e.first_get; g < e.first_get + e.get_count; ++g) {
      gets_[g]->status = failure;
    }
  }
}

}  // namespace cachet::tokyotyrant
