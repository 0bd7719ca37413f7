// TextBatch: encoding a server's operations as text commands and matching the
// replies, in order, back to them.
#include "text_batch.h"

#include "exptime.h"
#include "reply_status.h"
#include "text_request.h"

namespace cachet::memcached {

void TextBatch::Reset(const BatchSettings& settings) {
  settings_ = settings;
  request_.Clear();
  ops_.clear();
  noreply_.clear();
  expected_.clear();
  next_ = 0;
  expected_count_ = 0;
  gets_open_ = false;
  silent_tail_ = false;
  poisoned_ = false;
  shape_ = Shape::kBatch;
  line_op_ = nullptr;
  ResetReader();
}

UsualLine OtherUsualTextLine(std::string_view input, OpKind kind) {
  using quick_detail::FixedLine;
  UsualLine line;
  switch (kind) {
    case OpKind::kStore:
      FixedLine(input, "NOT_STORED\r\n", StatusCode::kNotStored, &line) ||
          FixedLine(input, "EXISTS\r\n", StatusCode::kExists, &line) ||
          FixedLine(input, "NOT_FOUND\r\n", StatusCode::kNotFound, &line);
      break;
    case OpKind::kRemove:
    case OpKind::kTouch:
    case OpKind::kIncr:
    case OpKind::kDecr:
      FixedLine(input, "NOT_FOUND\r\n", StatusCode::kNotFound, &line);
      break;
    case OpKind::kGet:
      break;
  }
  return line;
}

void TextBatch::TakeBatchReplies(net::ReadBuffer& buffer) {
  while (next_ < expected_count_) {
    Expected& expected = expected_[next_];
    if (expected.closing) return;  // the general parser reads VERSION
    if (!(expected.retrieval ? TakeRetrievals(buffer, expected)
                             : TakeLine(buffer, *ops_[expected.first_op]))) {
      return;
    }
  }
}

bool TextBatch::TakeRetrievals(net::ReadBuffer& buffer, Expected& group) {
  for (;;) {
    const std::string_view input = buffer.data();
    if (!input.empty() && input[0] == 'E') {
      if (!StartsWith(input, "END\r\n")) return false;
      // Every key still open is a miss.
      for (std::size_t i = 0; i < group.op_count; ++i) {
        ops_[group.first_op + i]->status = Status::NotFound();
      }
      group.op_count = 0;
      ++next_;
      buffer.Consume(5);
      return true;
    }
    if (group.op_count == 0) return false;
    Operation& op = *ops_[group.first_op];
    std::size_t consumed = 0;
    const QuickReply hit = QuickTextValue(input, op.key, limits_, &consumed);
    if (hit.outcome != QuickOutcome::kDone) return false;
    StoreHit(op, hit.data, hit.flags, hit.cas);
    ++group.first_op;
    --group.op_count;
    // Consumed only now: the data viewed the buffer.
    buffer.Consume(consumed);
  }
}

void TextBatch::Reshape(bool silent) {
  ops_.assign(silent ? 0 : 1, nullptr);
  expected_.assign(silent ? 0 : 1, Expected{});
  noreply_.assign(silent ? 1 : 0, nullptr);
  gets_open_ = false;
  shape_ = silent ? Shape::kOneSilent : Shape::kOne;
}

void TextBatch::CloseGetsLine() {
  if (!gets_open_) return;
  // The keys go out together, once the line is whole: one append for all.
  const Expected& group = expected_.back();
  AppendTextKeys(request_, std::span(ops_).subspan(group.first_op, group.op_count), keys_);
  EndTextLine(request_);
  gets_open_ = false;
}

void TextBatch::Add(Operation& op) {
  NoteKind(op);
  if (op.kind == OpKind::kGet) {
    if (!gets_open_) {
      BeginTextRetrieval(request_, settings_.touch_on_get, ExptimeFor(settings_.get_touch_ttl));
      expected_.push_back({ops_.size(), ops_.size(), 0, true});
      gets_open_ = true;
      silent_tail_ = false;
    }
    ops_.push_back(&op);
    ++expected_.back().op_count;
    return;
  }
  CloseGetsLine();
  AppendTextUpdate(request_, op);
  if (op.noreply) {
    noreply_.push_back(&op);
    silent_tail_ = true;
  } else {
    expected_.push_back({ops_.size(), ops_.size(), 1, false});
    ops_.push_back(&op);
    silent_tail_ = false;
  }
}

void TextBatch::Finish() {
  CloseGetsLine();
  // With no reply expected at all the exchange only sends; otherwise a reply
  // arriving while the noreply commands still go out would end it early. Two
  // replies or more are closed too: text replies carry no request's mark, so a
  // reply sent twice would stand in for the next one, whose own would then
  // arrive after the batch, as the answer to the connection's next command.
  if ((silent_tail_ || expected_.size() >= 2) && !expected_.empty()) {
    request_.Append(std::string_view("version\r\n"));
    expected_.push_back({ops_.size(), ops_.size(), 0, false, true});
  }
  expected_count_ = expected_.size();
}

Status TextBatch::OnReply(const Reply& reply) {
  if (reply.kind == ReplyKind::kError || reply.kind == ReplyKind::kClientError) {
    poisoned_ = true;
  }
  Expected& current = expected_[next_];
  if (current.closing) {
    if (reply.kind != ReplyKind::kVersion) {
      return Status::ProtocolError("memcached: a reply too many: " +
                                   std::string(ReplyWord(reply.kind)) +
                                   " where the VERSION that closes the batch was expected");
    }
    ++next_;
    return Status::OK();
  }
  // Read before the reply moves next_ on: whose error line it was.
  const bool out_of_step = MayLeaveOutOfStep(reply, current);
  Status s = current.retrieval ? OnRetrievalReply(current, reply)
                               : OnSingleReply(*ops_[current.first_op], reply);
  // A reply that does not fit leaves its operation unanswered: Settle() gives it
  // the exchange's protocol error, rather than an ok it never had.
  if (s.ok() && !current.retrieval) ++next_;
  if (s.ok() && out_of_step) StopReading();
  return s;
}

Operation* TextBatch::OwnerOf(const Reply& reply) {
  if (next_ >= expected_count_ || !expected_[next_].retrieval) return nullptr;
  // Hits come in the order asked: the VALUE's key is the first open one of that name.
  const Expected& group = expected_[next_];
  for (std::size_t i = group.first_op; i < group.first_op + group.op_count; ++i) {
    if (ops_[i]->key == reply.key) return ops_[i];
  }
  return nullptr;
}

bool TextBatch::MayLeaveOutOfStep(const Reply& reply, const Expected& current) const {
  // cachet sends no command memcached does not know, so ERROR means the server
  // read something else as a command: a data block, or a line of its own making.
  if (reply.kind == ReplyKind::kError) return true;
  // A storage command refused by CLIENT_ERROR (a bad line, a bad data chunk)
  // may have had its data block read as commands, whose replies follow.
  return reply.kind == ReplyKind::kClientError && !current.retrieval &&
         ops_[current.first_op]->kind == OpKind::kStore;
}

void TextBatch::StopReading() {
  // The replies before the error line pair by position too, and with the stream
  // in doubt none of them is kept (next_ has moved past the error line's group).
  const Status doubted = Status::IoError(
      "memcached: answer not kept: a later command's error line may have put the server's "
      "replies out of step; the operation may have been applied");
  const std::size_t answered_end = expected_[next_ - 1].begin;
  for (std::size_t i = 0; i < answered_end; ++i) {
    if (!AnsweredHit(i, answered_end)) ops_[i]->status = doubted;
  }
  const Status unread = Status::ProtocolError(
      "memcached: not answered: an earlier command's error line may have put the server's "
      "replies out of step, so the rest were not read");
  for (std::size_t e = next_; e < expected_count_; ++e) {
    const Expected& group = expected_[e];
    for (std::size_t i = 0; i < group.op_count; ++i) ops_[group.first_op + i]->status = unread;
  }
  next_ = expected_count_;
  stopped_reading_ = true;
}

Status TextBatch::OnRetrievalReply(Expected& group, const Reply& reply) {
  auto close_group = [&](const Status& status) {
    // An error line ends the group instead of an END: the keys skipped are
    // not known to be misses either.
    if (!status.IsNotFound()) {
      for (std::size_t i = group.begin; i < group.first_op; ++i) {
        if (ops_[i]->status.IsNotFound()) ops_[i]->status = status;
      }
    }
    for (std::size_t i = 0; i < group.op_count; ++i) ops_[group.first_op + i]->status = status;
    group.op_count = 0;
    ++next_;
  };
  if (reply.kind == ReplyKind::kEnd) {
    close_group(Status::NotFound());
    return Status::OK();
  }
  if (IsErrorReply(reply.kind)) {
    close_group(ErrorOf(reply));
    return Status::OK();
  }
  if (reply.kind != ReplyKind::kValue) {
    return Status::ProtocolError("memcached: unexpected reply inside a gets reply");
  }
  // Hits come in request order, so the VALUE is for a key still open; every
  // key it skips was a miss, should the END confirm it.
  const std::size_t end = group.first_op + group.op_count;
  std::size_t hit = group.first_op;
  while (hit < end && ops_[hit]->key != reply.key) ++hit;
  if (hit == end) {
    return Status::ProtocolError(
        "memcached: VALUE for a key that was not asked for, or not in request order");
  }
  for (; group.first_op < hit; ++group.first_op) ops_[group.first_op]->status = Status::NotFound();
  FillItem(*ops_[group.first_op++], reply);
  group.op_count = end - group.first_op;
  return Status::OK();
}

Status TextBatch::OnSingleReply(Operation& op, const Reply& reply) {
  if (!IsErrorReply(reply.kind) && !TextReplyFits(op.kind, reply.kind)) {
    return Status::ProtocolError("memcached: a reply that does not fit the command");
  }
  op.status = ErrorOf(reply);
  if (reply.kind == ReplyKind::kNumber) op.counter = reply.number;
  return Status::OK();
}

void TextBatch::SettleRest(const Status& transport) {
  // noreply commands were sent; with the text protocol their outcome is unknown
  // unless the connection failed.
  for (Operation* op : noreply_) op->status = net::UnansweredStatus(*op, transport, "memcached");
  SettleDirect(transport);
  if (transport.ok()) return;
  // A stream out of step may have paired any reply with the wrong command.
  // After a protocol error no answer of the exchange stands. After an early end
  // (a reply skipped, then a timeout, a close or a value too large to read) the
  // hits stand, since each VALUE line names its key, but no other answer does;
  // a value too large to read is its own key's too_large, as its header says.
  // Answered so far: every group before next_, and the current one's keys
  // before its first open one.
  const std::size_t answered_end =
      transport.IsProtocolError() ? 0
      : next_ < expected_.size()  ? expected_[next_].first_op
                                  : ops_.size();
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i] == too_large_ || AnsweredHit(i, answered_end)) continue;
    ops_[i]->status = net::UnansweredStatus(*ops_[i], transport, "memcached");
  }
}

}  // namespace cachet::memcached
