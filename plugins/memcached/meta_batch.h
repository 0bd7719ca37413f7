// MetaBatch: a server's share of a batch in the meta protocol.
//
// Every operation carries its index as the O token, and the request ends with
// mn, so replies match by token and MN says all have arrived. Reads use q
// (quiet): a miss (EN) is not sent at all, errors still are. noreply operations
// are quiet too (a success, HD, is not sent), and since the batch still waits
// for MN, their errors are reported. Other writes are not quiet, and touch never
// is: its hit (HD) and its miss (EN) would both vanish.
//
// memcached sends error lines (SERVER_ERROR, CLIENT_ERROR) without the O token.
// Replies come in order and only quiet operations succeed in silence, so such an
// error is the first unanswered write's, unless noreply writes come before it:
// then the next reply says whose (that write's own reply: a noreply write's
// before it; a later one, or MN: its own). Among several noreply writes each is
// told it may have failed. Were ordinary writes quiet too, a value too large for
// the server would fail an earlier write that was stored and leave itself
// reported as stored. The connection is dropped afterwards rather than trusted.
//
// It is the one reader of meta replies: a batch's, and a single operation's
// (ExpectOne, ForOne). A single command is sent alone, with its O token and
// without q or mn, so its one reply (EN, HD, VA...) ends the exchange; a
// noreply one keeps the batch's form (q, then mn), so that its errors still
// come back and its silence means what it means in a batch.
//
// The usual replies (those spelled as memcached answers cachet's commands) are
// parsed first, straight off the buffer (meta_usual.h), into the Reply the
// general parser would make; anything else goes to the general parser from the
// same bytes, and the usual replies after it are taken again (TakeUsualReplies,
// the hook of the loop both protocols share). Both are routed by OnReply(), so
// every reply is judged in one place.
#pragma once

#include <cstdint>
#include <vector>

#include "memcached_batch.h"
#include "meta_parser.h"
#include "meta_request.h"
#include "meta_usual.h"

namespace cachet::memcached {

class MetaBatch final : public MemcachedBatch {
 public:
  // With `usual_replies` false every reply goes to the general parser: for the
  // tests and the fuzzer, which check that parsing the usual ones first changes nothing.
  explicit MetaBatch(ParserLimits limits, bool usual_replies = true)
      : MemcachedBatch(limits), parser_(limits), usual_replies_(usual_replies) {}

  void Reset(const BatchSettings& settings) override;
  void Add(Operation& op) override;
  void Finish() override;
  void Settle(const Status& transport) override;

  // Readies the batch for the reply to `op` alone, whose command the caller sent
  // (a single operation's, built on the stack: AppendMetaOperation with
  // OneTokens(), then mn if op.noreply): as Reset() then Add(), without a
  // request. A hit goes to `*hit`, op.result or an Item the caller lends.
  void ExpectOne(Operation& op, const BatchSettings& settings, Item* hit);
  // This thread's batch for single operations, readied by ExpectOne(), reading
  // with `limits`; valid until the thread's next ForOne(). Inline: every
  // single operation asks.
  static MetaBatch& ForOne(Operation& op, const BatchSettings& settings, Item* hit,
                           ParserLimits limits) {
    MetaBatch& batch = LoneBatch<MetaBatch>::Get(limits);
    batch.limits_ = limits;
    batch.parser_ = MetaReplyParser(limits);
    batch.ExpectOne(op, settings, hit);
    return batch;
  }
  // The tokens of a single operation's command: O0, and q (then mn) only for
  // noreply, as ExpectOne() reads it.
  static MetaTokens OneTokens(const Operation& op, const BatchSettings& settings) {
    return {0, op.noreply, settings.binary_keys};
  }

  // The usual replies first, whole; what is left (a reply still arriving, an
  // error, anything unusual) goes to the general loop, MemcachedBatch::Consume.
  // Inline: a single operation's exchange (net::RunLoneExchange) is a template
  // on this final class and calls it directly, so its usual reply is taken
  // inside the exchange, without a call.
  Status Consume(net::ReadBuffer& buffer) override {
    if (usual_replies_ && !direct_active()) {
      if (Status s = TakeUsual(buffer); !s.ok()) return s;
      if (done_ && buffer.empty()) return Status::OK();
    }
    return MemcachedBatch::Consume(buffer);
  }

  // A value still arriving straight into its item is not done.
  bool done() const noexcept override { return done_ && !direct_active(); }

 private:
  struct Slot {
    Operation* op;
    bool quiet;     // silence means the default outcome below
    bool answered;  // a reply arrived for it
  };
  // An error line that noreply writes [from, loud) or the write `loud` after
  // them may have sent (`loud` == the slot count: no write after them answers):
  // what arrives next says whose (SettlePending). A noreply write after the
  // one that failed may still answer with its own token (NS, EX, NF).
  struct PendingError {
    bool active = false;
    std::size_t from = 0;
    std::size_t loud = 0;
    Status error;
    bool several = false;  // a second error line came before the next reply
  };

  ParseResult ParseReply(std::string_view input, Reply* reply) const override {
    return parser_.Parse(input, reply);
  }
  bool ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                   std::uint64_t* size) const override {
    return parser_.ValueHeader(input, reply, data_offset, size);
  }
  Status OnReply(const Reply& reply) override;
  Operation* OwnerOf(const Reply& reply) override;
  Status TakeUsualReplies(net::ReadBuffer& buffer) override {
    return usual_replies_ ? TakeUsual(buffer) : Status::OK();
  }
  // Parses the usual replies off the front of `buffer` (UsualMetaReply) and
  // routes each by OnReply(), until done or a reply it leaves to the general
  // parser; an error is OnReply()'s. With one operation its key is known, so a
  // returned key is compared rather than tokenized (a binary key is not sent as is).
  Status TakeUsual(net::ReadBuffer& buffer) {
    const std::string_view key =
        slots_.size() == 1 && !settings_.binary_keys ? slots_[0].op->key : std::string_view();
    while (!done_) {
      Reply reply;
      const std::size_t consumed = UsualMetaReply(buffer.data(), limits_, key, &reply);
      if (consumed == 0) break;
      Status s = OnReply(reply);
      // Consumed only now: the reply's views point into the buffer.
      buffer.Consume(consumed);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }
  Status OnTokenReply(const Reply& reply);
  Status OnUntokenedError(const Reply& reply);
  // Settles the pending error by the reply that came next: one for slot `next`,
  // or MN (`next` = slots_.size()). Before `loud`, or `loud` itself, it was a
  // noreply write's before that; after `loud`, loud's own.
  Status SettlePending(std::size_t next);
  // Gives `error` to the unanswered noreply writes in [from, to): as it is when
  // there is one and the sender is `known` to be among them, else each told it
  // may have failed; false when there is none.
  bool BlameQuiet(std::size_t from, std::size_t to, const Status& error, bool known = true);

  // Marks `slot` answered; a single command's one reply ends the exchange.
  void Answered(Slot& slot, std::size_t index);

  MetaReplyParser parser_;
  BatchSettings settings_;
  std::vector<Slot> slots_;
  std::size_t after_last_answer_ = 0;
  PendingError pending_;
  bool done_ = false;
  bool ends_at_noop_ = true;  // false: a single command sent without mn
  bool usual_replies_;
};

}  // namespace cachet::memcached
