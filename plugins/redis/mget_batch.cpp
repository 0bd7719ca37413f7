// Reading a batch of gets as one MGET (see mget_batch.h).
#include "mget_batch.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>
#include <memory>
#include <system_error>

#include "redis_replies.h"
#include "redis_session.h"
#include "resp_encoder.h"
#include "resp_frames.h"
#include "whole_bulk.h"

namespace cachet::redis {

// The request is sized once and written straight into uninitialized memory:
// appending key by key would check capacity and copy through a scratch buffer
// each time, and a std::string sized up front would first fill itself.
void MgetBatch::Seal() {
  constexpr std::string_view kCommand = "MGET";
  std::size_t size = ArrayHeaderSize(reads_.size() + 1) + BulkArgSize(kCommand.size());
  for (const Operation* op : reads_) size += BulkArgSize(op->key.size());
  request_ = std::make_unique_for_overwrite<char[]>(size);
  char* at = WriteArrayHeader(request_.get(), reads_.size() + 1);
  at = WriteBulkArg(at, kCommand);
  for (const Operation* op : reads_) at = WriteBulkArg(at, op->key);
  assert(at == request_.get() + size);  // the sizes and the writers agree
  request_size_ = size;
}

Status MgetBatch::ConsumeInstead(net::ReadBuffer& buffer, bool* complete) {
  // One frame at most: after a push the array header is looked for again.
  return TakeFrames(parser_, buffer, where_, [&](RespValue reply, Frame& next) {
    next = Frame::kLast;
    // Out-of-band RESP3 pushes are not the reply: the array is still to come.
    if (reply.type() == RespType::kPush) {
      Push(reply);
      return Status::OK();
    }
    if (!reply.IsError()) {
      return Status::ProtocolError("redis " + where_ + ": MGET answered with a " +
                                   std::string(RespTypeName(reply.type())) + " reply");
    }
    const Status error = StatusFromError(reply.text(), where_);
    for (Operation* op : reads_) op->status = error;
    answered_ = reads_.size();
    *complete = true;
    return Status::OK();
  });
}

Status MgetBatch::ConsumeHeader(net::ReadBuffer& buffer, bool* complete) {
  const std::string_view data = buffer.data();
  if (data.empty()) return Status::OK();
  if (data.front() != '*') return ConsumeInstead(buffer, complete);
  const std::size_t searched = std::min(data.size(), limits_.max_line_length + 3);
  const void* found = std::memchr(data.data(), '\n', searched);
  if (found == nullptr) {
    if (searched < data.size()) {
      return Status::ProtocolError("redis " + where_ + ": MGET reply header too long");
    }
    return Status::OK();  // the rest of the line is still to come
  }
  const auto newline = static_cast<std::size_t>(static_cast<const char*>(found) - data.data());
  std::size_t count = 0;
  // At least "*N\r" before the newline, so the digits' range is never reversed.
  const bool framed = newline >= 3 && data[newline - 1] == '\r';
  const char* digits_end = data.data() + (framed ? newline - 1 : 1);
  auto [end, ec] = std::from_chars(data.data() + 1, digits_end, count);
  if (!framed || ec != std::errc() || end != digits_end || count != reads_.size()) {
    return Status::ProtocolError("redis " + where_ + ": MGET of " + std::to_string(reads_.size()) +
                                 " keys answered with a bad array header");
  }
  buffer.Consume(newline + 1);
  *complete = true;
  return Status::OK();
}

Status MgetBatch::Consume(net::ReadBuffer& buffer) {
  // Each round reads the header (or an error in its place), skips a push, or
  // stops to wait for more bytes.
  while (!header_read_) {
    const std::size_t before = buffer.size();
    if (Status s = ConsumeHeader(buffer, &header_read_); !s.ok()) return s;
    if (!header_read_ && buffer.size() == before) return Status::OK();
  }
  // Each element is a bulk string or a nil; each round finishes a direct read,
  // reads whole elements straight off, and gives the parser the next one (and,
  // once the last is in, the pushes right after the array).
  for (;;) {
    if (Status s = direct_.Continue(buffer, where_, &answered_); !s.ok() || direct_.active())
      return s;
    if (!done() && parser_.idle()) ConsumeWholeElements(buffer);
    const std::size_t before = answered_;
    if (Status s = TakeFrames(parser_, buffer, where_,
                              [this](RespValue frame, Frame& next) { return Take(frame, next); });
        !s.ok() || done()) {
      return s;
    }
    if (answered_ > before) continue;  // back to reading whole elements straight off
    // A large value still mostly to come is read direct; else wait for bytes.
    if (!direct_.Start(buffer, parser_, *reads_[answered_], where_)) return Status::OK();
  }
}

Status MgetBatch::Take(RespValue frame, Frame& next) {
  if (done()) {
    // Pushes right after the array are no reply to anything: not leftover.
    if (frame.type() == RespType::kPush) {
      Push(frame);
    } else {
      next = Frame::kLeft;
    }
    return Status::OK();
  }
  Operation& op = *reads_[answered_++];
  op.status = ReadValue(frame, where_, &op.result);
  // The rest may be whole elements again, read straight off (after the last
  // one, the loop goes on to the pushes).
  if (!done()) next = Frame::kLast;
  // An element that is no value: the reply is not an MGET's.
  return op.status.IsProtocolError() ? op.status : Status::OK();
}

void MgetBatch::Push(RespValue push) const {
  if (session_ != nullptr) session_->DeliverPush(push, where_);
}

// Flattened: ReadWholeBulk, asked once per element, compiles into the loop.
[[gnu::flatten]] void MgetBatch::ConsumeWholeElements(net::ReadBuffer& buffer) {
  const std::string_view data = buffer.data();
  std::size_t used = 0;
  WholeBulk element;
  // `used` never passes the end: each element read lies inside `data`.
  while (answered_ < reads_.size() &&
         ReadWholeBulk({data.data() + used, data.size() - used}, limits_, &element)) {
    Operation& op = *reads_[answered_++];
    used += element.size;
    // As ReadValue does: a nil is a miss that leaves the item alone.
    if (element.nil) {
      op.status = Status::NotFound();
      continue;
    }
    StoreValue(element.data, &op.result);
    op.status = Status::OK();
  }
  buffer.Consume(used);
}

void MgetBatch::Settle(const Status& status) {
  // After a protocol error (a reply too many included) no element can be
  // trusted to be the value of the key at its position.
  const std::size_t first = status.IsProtocolError() ? 0 : answered_;
  for (std::size_t i = first; i < reads_.size(); ++i) {
    // Elements come in order: a value too large to read was the next one's.
    if (i == answered_ && status.IsTooLarge()) {
      reads_[i]->status = status;
      continue;
    }
    reads_[i]->status = status.ok() ? Status::IoError("redis " + where_ + ": no reply")
                                     : net::UnansweredStatus(*reads_[i], status, "redis " + where_);
  }
}

}  // namespace cachet::redis
