// MetaBatch: encoding a server's operations as meta commands with opaque tokens
// and routing the (mostly quiet) replies back by token.
#include "meta_batch.h"

#include <string>

#include "exptime.h"
#include "reply_line.h"
#include "reply_status.h"

namespace cachet::memcached {

namespace {

// What silence means for a quiet operation once MN arrived.
Status QuietOutcome(const Operation& op) {
  return op.kind == OpKind::kGet ? Status::NotFound() : Status::OK();
}

bool Expects(OpKind kind, bool quiet, ReplyKind reply) {
  switch (kind) {
    case OpKind::kGet:
      return reply == ReplyKind::kMetaValue || reply == ReplyKind::kMetaMiss;
    case OpKind::kStore:
      return reply == ReplyKind::kMetaHeader || reply == ReplyKind::kNotStored ||
             reply == ReplyKind::kExists || reply == ReplyKind::kNotFound;
    case OpKind::kRemove:
      return reply == ReplyKind::kMetaHeader || reply == ReplyKind::kNotFound ||
             reply == ReplyKind::kExists;
    case OpKind::kIncr:
    case OpKind::kDecr:
      // ma asks for the new value (v) unless quiet (noreply).
      return reply == (quiet ? ReplyKind::kMetaHeader : ReplyKind::kMetaValue) ||
             reply == ReplyKind::kNotFound;
    case OpKind::kTouch:
      return reply == ReplyKind::kMetaHeader || reply == ReplyKind::kMetaMiss;
  }
  return false;
}

}  // namespace

void MetaBatch::Reset(const BatchSettings& settings) {
  settings_ = settings;
  request_.Clear();
  slots_.clear();
  after_last_answer_ = 0;
  done_ = false;
  ends_at_noop_ = true;
  poisoned_ = false;
  pending_.active = false;
  ResetReader();
}

void MetaBatch::ExpectOne(Operation& op, const BatchSettings& settings, Item* hit) {
  settings_ = settings;
  slots_.clear();  // keeps its capacity: one slot, allocated once per thread
  slots_.push_back({&op, op.noreply, false});
  after_last_answer_ = 0;
  done_ = false;
  ends_at_noop_ = op.noreply;
  poisoned_ = false;
  pending_.active = false;
  ResetReader();
  NoteKind(op);
  LendItem(op, hit);
}

void MetaBatch::Add(Operation& op) {
  NoteKind(op);
  // Only reads and noreply writes are quiet: see the header on error lines.
  const bool quiet = op.noreply || op.kind == OpKind::kGet;
  const MetaTokens tokens{static_cast<std::uint32_t>(slots_.size()), quiet, settings_.binary_keys};
  AppendMetaOperation(request_, op, tokens, settings_.touch_on_get,
                      ExptimeFor(settings_.get_touch_ttl));
  slots_.push_back({&op, quiet, false});
}

void MetaBatch::Finish() { AppendMetaNoop(request_); }

void MetaBatch::Answered(Slot& slot, std::size_t index) {
  slot.answered = true;
  after_last_answer_ = index + 1;
  if (!ends_at_noop_) done_ = true;
}

Status MetaBatch::OnReply(const Reply& reply) {
  if (reply.kind == ReplyKind::kMetaNoop) {
    if (!ends_at_noop_) return Status::ProtocolError("memcached: MN to a command sent without mn");
    if (Status s = SettlePending(slots_.size()); !s.ok()) return s;
    done_ = true;
    for (Slot& slot : slots_) {
      if (!slot.answered && !slot.quiet) {
        // A reply the server owed is missing: the stream cannot be trusted again.
        slot.op->status = Status::ProtocolError("memcached: no reply before MN");
        poisoned_ = true;
      } else if (!slot.answered) {
        slot.op->status = QuietOutcome(*slot.op);
      }
      slot.answered = true;
    }
    return Status::OK();
  }
  if (IsErrorReply(reply.kind) && !reply.has_opaque) return OnUntokenedError(reply);
  return OnTokenReply(reply);
}

Operation* MetaBatch::OwnerOf(const Reply& reply) {
  if (!reply.has_opaque || reply.opaque >= slots_.size()) return nullptr;
  Slot& slot = slots_[reply.opaque];
  if (slot.answered) return nullptr;
  Answered(slot, reply.opaque);  // Settle leaves it
  return slot.op;
}

Status MetaBatch::OnTokenReply(const Reply& reply) {
  if (!reply.has_opaque || reply.opaque >= slots_.size() || slots_[reply.opaque].answered) {
    return Status::ProtocolError("memcached: meta reply with a missing or unknown O token");
  }
  if (Status s = SettlePending(reply.opaque); !s.ok()) return s;
  Slot& slot = slots_[reply.opaque];
  Operation& op = *slot.op;
  if (!IsErrorReply(reply.kind) && !Expects(op.kind, slot.quiet, reply.kind)) {
    return Status::ProtocolError("memcached: a meta reply that does not fit the command");
  }
  // A returned key (k) must be the one asked for (with binary_keys k is not asked).
  if (!reply.key.empty() && !settings_.binary_keys &&
      !MetaKeyNames(reply.key, reply.key_base64, op.key)) {
    return Status::ProtocolError("memcached: a meta reply for another key");
  }
  Answered(slot, reply.opaque);
  if (reply.kind != ReplyKind::kMetaValue) {
    op.status = ErrorOf(reply);
    return Status::OK();
  }
  if (op.kind == OpKind::kGet) {
    if (IsLeasePlaceholder(reply)) {
      op.status = Status::NotFound();  // a GetOrCompute lease, not a value
      return Status::OK();
    }
    FillItem(op, reply);
    return Status::OK();
  }
  // ma ... v answers the new counter value as the data block.
  if (!ParseU64(reply.data, &op.counter)) {
    return Status::ProtocolError("memcached: ma returned a value that is not a number");
  }
  op.status = Status::OK();
  return Status::OK();
}

Status MetaBatch::OnUntokenedError(const Reply& reply) {
  poisoned_ = true;
  const Status error = ErrorOf(reply);
  if (pending_.active) {
    if (pending_.loud == slots_.size()) {
      // Two errors from the noreply writes: which, the next reply still bounds.
      pending_.several = true;
      return Status::OK();
    }
    // Two errors before the first was placed, both from the noreply writes or
    // `loud`: each noreply write is told it may have failed; `loud` answers for
    // itself, or gets no reply before MN (then it was one of them).
    BlameQuiet(pending_.from, pending_.loud, pending_.error, /*known=*/false);
    pending_.active = false;
    return Status::OK();
  }
  // Who may have sent it: the noreply writes not answered yet, and the first
  // write after them that answers. Quiet reads of validated keys do not fail.
  std::size_t loud = after_last_answer_;
  bool quiet_before = false;
  for (; loud < slots_.size(); ++loud) {
    const Slot& slot = slots_[loud];
    if (slot.answered || (slot.quiet && slot.op->kind == OpKind::kGet)) continue;
    if (!slot.quiet) break;
    quiet_before = true;
  }
  if (!quiet_before) {
    if (loud == slots_.size()) {
      return Status::ProtocolError(std::string(error.message()) +
                                   " (an error reply that matches no command)");
    }
    Answered(slots_[loud], loud);
    slots_[loud].op->status = error;
    return Status::OK();
  }
  pending_ = {true, after_last_answer_, loud, error, false};
  return Status::OK();
}

Status MetaBatch::SettlePending(std::size_t next) {
  if (!pending_.active) return Status::OK();
  pending_.active = false;
  if (next > pending_.loud) {
    // `loud` would have answered before this: the error was its own, and the
    // noreply writes before it succeeded in silence.
    Answered(slots_[pending_.loud], pending_.loud);
    slots_[pending_.loud].op->status = pending_.error;
    return Status::OK();
  }
  if (!BlameQuiet(pending_.from, next, pending_.error, /*known=*/!pending_.several)) {
    return Status::ProtocolError(std::string(pending_.error.message()) +
                                 " (an error reply, then a reply out of order)");
  }
  return Status::OK();
}

bool MetaBatch::BlameQuiet(std::size_t from, std::size_t to, const Status& error, bool known) {
  std::size_t count = 0;
  for (std::size_t i = from; i < to; ++i) {
    const Slot& slot = slots_[i];
    if (!slot.answered && slot.quiet && slot.op->kind != OpKind::kGet) ++count;
  }
  if (count == 0) return false;
  known = known && count == 1;
  const std::string which =
      known        ? std::string()
      : count == 1 ? std::string("memcached: this noreply write may have failed: ")
                   : "memcached: one of " + std::to_string(count) +
                         " noreply writes may have failed, not known which: ";
  for (std::size_t i = from; i < to; ++i) {
    Slot& slot = slots_[i];
    if (slot.answered || !slot.quiet || slot.op->kind == OpKind::kGet) continue;
    Answered(slot, i);
    // Not known to have failed: io_error, the outcome unknown. Its own code
    // would say it was refused (a refused set's key is removed: Cache).
    slot.op->status = known ? error : Status::IoError(which + std::string(error.message()));
  }
  return true;
}

void MetaBatch::Settle(const Status& transport) {
  SettleDirect(transport);
  if (transport.ok()) return;
  // A stream out of step may have paired any reply with the wrong command:
  // after a protocol error no answer of the exchange stands.
  for (Slot& slot : slots_) {
    if (transport.IsProtocolError()) {
      slot.op->status = transport;
    } else if (!slot.answered) {
      slot.op->status = net::UnansweredStatus(*slot.op, transport, "memcached");
    }
  }
}

}  // namespace cachet::memcached
