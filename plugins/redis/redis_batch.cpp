// One server's pipelined batch: encode every operation, then map replies in order.
#include "redis_batch.h"

#include <algorithm>

#include "cluster_slots.h"
#include "lua_scripts.h"
#include "redis_commands.h"
#include "redis_replies.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

// Append and prepend, whose script answers 1 or 0 (kNotStored).
bool IsAppendOrPrepend(const Operation& op) {
  return op.kind == OpKind::kStore &&
         (op.mode == StoreMode::kAppend || op.mode == StoreMode::kPrepend);
}

bool IsCas(const Operation& op) { return op.kind == OpKind::kStore && op.mode == StoreMode::kCas; }

// The script `op` runs as, or null for a plain command.
const LuaScript* ScriptOf(const Operation& op, CounterMode counters) {
  switch (op.kind) {
    case OpKind::kStore:
      if (op.mode == StoreMode::kAppend) return &kAppendScript;
      if (op.mode == StoreMode::kPrepend) return &kPrependScript;
      if (op.mode == StoreMode::kCas) return &kCasScript;
      return nullptr;
    case OpKind::kIncr:
    case OpKind::kDecr:
      return counters == CounterMode::kMemcached ? &kCounterScript : nullptr;
    default:
      return nullptr;
  }
}

// Encodes `op`; false when it is settled without a command.
bool Encode(Operation& op, CounterMode counters, std::string* out) {
  if (op.ttl.count() < 0 && (op.kind == OpKind::kStore || op.kind == OpKind::kTouch)) {
    op.status = NegativeTtlError("redis");
    return false;
  }
  switch (op.kind) {
    case OpKind::kGet:
      AppendGet(out, op.key);
      return true;
    case OpKind::kStore:
      if (IsCas(op)) {
        AppendCas(out, op.key, op.item.value, op.item.cas, op.ttl, false);
      } else if (IsAppendOrPrepend(op)) {
        AppendScript(out, op.mode, op.key, op.item.value, false);
      } else {
        AppendSet(out, op.mode, op.key, op.item.value, op.ttl);
      }
      return true;
    case OpKind::kRemove:
      AppendDel(out, op.key);
      return true;
    case OpKind::kIncr:
    case OpKind::kDecr:
      if (counters == CounterMode::kNative) {
        op.status = CheckCounterDelta(op.delta);
        if (!op.status.ok()) return false;
      }
      AppendCounter(out, counters, op.kind == OpKind::kIncr, op.key, op.delta, false);
      return true;
    case OpKind::kTouch:
      AppendTouch(out, op.key, op.ttl);
      return true;
  }
  op.status = Status::Internal("unknown operation kind");
  return false;
}

Status Apply(Operation& op, RespValue reply, std::string_view where) {
  switch (op.kind) {
    case OpKind::kGet:
      return ReadValue(reply, where, &op.result);
    case OpKind::kStore:
      if (IsCas(op)) return ReadCasOutcome(reply, where);
      return IsAppendOrPrepend(op) ? ReadOneOrZero(reply, where, Status::NotStored())
                                   : ReadStored(reply, where);
    case OpKind::kRemove:
      return ReadOneOrZero(reply, where, Status::NotFound());
    case OpKind::kIncr:
    case OpKind::kDecr:
      return ReadCounter(reply, where, &op.counter);
    case OpKind::kTouch:
      return ReadTouched(reply, where, SendsExpiry(op.ttl));
  }
  return Status::Internal("unknown operation kind");
}

}  // namespace

void RedisBatch::NoteError(Operation& op, std::string_view error) {
  if (error.starts_with("NOSCRIPT")) {
    needs_script_.push_back(&op);
  } else if (ClassifyClusterError(error) != ClusterErrorKind::kNone) {
    redirected_.push_back({&op, std::string(error)});
  }
}

bool RedisBatch::Add(Operation& op) {
  if (const LuaScript* script = ScriptOf(op, counters_)) LoadScriptOnce(*script);
  if (!Encode(op, counters_, &request_)) return false;
  sent_.push_back(&op);
  writes_ = writes_ || op.kind != OpKind::kGet;
  return true;
}

void RedisBatch::Seal() {
  if (sent_.size() < 2) return;  // one reply is its own end
  AppendCommand(&request_, {"PING"});
  sealed_ = true;
}

// A server that lacks the script would answer NOSCRIPT to every call of it, and
// those calls would then run one by one after the batch, out of order with the
// batch's later operations on the same keys. SCRIPT LOAD ahead of the first
// call keeps the whole batch in one round trip and in order.
void RedisBatch::LoadScriptOnce(const LuaScript& script) {
  for (const LuaScript* loaded : loaded_) {
    if (loaded == &script) return;
  }
  loaded_.push_back(&script);
  AppendCommand(&request_, {"SCRIPT", "LOAD", script.source});
  sent_.push_back(nullptr);  // its reply, the SHA, is not an operation's
}

Status RedisBatch::Consume(net::ReadBuffer& buffer) {
  // Each round finishes a direct read, or takes the whole replies in the buffer
  // (and, once the last is in, the pushes right after it).
  for (;;) {
    if (Status s = direct_.Continue(buffer, where_, &next_); !s.ok() || direct_.active()) return s;
    if (Status s = TakeFrames(parser_, buffer, where_,
                              [this](RespValue reply, Frame& next) { return Take(reply, next); });
        !s.ok() || done()) {
      return s;
    }
    // No whole reply left: a GET's large value still mostly to come is read direct.
    Operation* op = next_ < sent_.size() ? sent_[next_] : nullptr;
    if (op == nullptr || op->kind != OpKind::kGet || !direct_.Start(buffer, parser_, *op, where_)) {
      return Status::OK();
    }
  }
}

Status RedisBatch::Take(RespValue reply, Frame& next) {
  // Out-of-band RESP3 pushes are not replies to our commands, nor leftover.
  if (reply.type() == RespType::kPush) [[unlikely]] {
    if (session_ != nullptr) session_->DeliverPush(reply, where_);
    return Status::OK();
  }
  if (done()) {
    next = Frame::kLeft;  // nobody's reply: left for the exchange's leftover rule
    return Status::OK();
  }
  if (next_ == sent_.size()) {  // Seal()'s PING
    ++next_;
    return ReadClosingPong(reply, where_, "the batch");
  }
  Operation* op = sent_[next_++];
  // A SCRIPT LOAD (null) answers the SHA; had it failed, the calls after it
  // answer NOSCRIPT and are repeated.
  if (op == nullptr) return Status::OK();
  op->status = Apply(*op, reply, where_);
  if (reply.IsError()) {
    NoteError(*op, reply.text());
    return Status::OK();
  }
  // A reply of the wrong kind for its command: the stream is out of step, and
  // the exchange fails (Settle then voids every answer).
  return op->status.IsProtocolError() ? op->status : Status::OK();
}

void RedisBatch::Settle(const Status& status) {
  // Replies are paired with commands by position: after a protocol error (a
  // reply too many included), or an exchange that ended early (a reply
  // skipped, then a timeout, a close or a reply too large to read), any of
  // them may be another command's.
  const std::size_t first = status.ok() ? std::min(next_, sent_.size()) : 0;
  answered_ = first;
  if (first == 0) {
    // No reply is theirs for sure: not acted on (sent again, run one by one).
    redirected_.clear();
    needs_script_.clear();
  }
  for (std::size_t i = first; i < sent_.size(); ++i) {
    if (sent_[i] == nullptr) continue;  // a SCRIPT LOAD
    // Replies pair by position: a reply too large to read was the next one's.
    if (i == next_ && status.IsTooLarge()) {
      sent_[i]->status = status;
      continue;
    }
    sent_[i]->status = status.ok() ? Status::IoError("redis " + where_ + ": no reply")
                                   : net::UnansweredStatus(*sent_[i], status, "redis " + where_);
  }
}

}  // namespace cachet::redis
