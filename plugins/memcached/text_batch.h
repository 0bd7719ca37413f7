// TextBatch: a server's share of a batch in the classic text protocol.
//
// Consecutive gets share one "gets k1 k2 ..." line; hits come back as VALUE in
// request order and the END closes the group, so the keys without a VALUE are
// misses. Nothing is guessed: a VALUE for a key that is not among those still
// open (another key, one out of order, a duplicate) is a protocol error, and
// the keys a VALUE skipped are misses only once the END confirms them; until
// then a failed exchange leaves them its error; after a protocol error no
// answer stands, hits already read included. Every other command answers with
// one line, in order, unless noreply (then nothing comes back, and nothing can
// be reported: the text protocol's noreply loses errors). After an ERROR line,
// or a CLIENT_ERROR to a storage command, the server may have read a data block
// as commands and answered them too: that line is its operation's, and no later
// reply is paired (the rest take a protocol error; the connection is dropped).
//
// It is the one reader of text replies: a batch's, and a single operation's
// (ExpectOne, ForOne). The usual replies (a hit for the key expected next, an
// END, the one-line reply a command expects) are taken first, straight off the
// buffer (text_usual.h); anything else goes to the general parser and OnReply(),
// from the same bytes, so errors and unusual replies are decided in one place.
#pragma once

#include <string>
#include <vector>

#include "memcached_batch.h"
#include "text_parser.h"
#include "text_usual.h"

namespace cachet::memcached {

class TextBatch final : public MemcachedBatch {
 public:
  // With `usual_replies` false every reply goes to the general parser: for the
  // tests and the fuzzer, which check that taking the usual ones changes nothing.
  explicit TextBatch(ParserLimits limits, bool usual_replies = true)
      : MemcachedBatch(limits), parser_(limits), usual_replies_(usual_replies) {}

  void Reset(const BatchSettings& settings) override;
  void Add(Operation& op) override;
  // Closes the request. "version" follows, and its reply marks the end, when
  // noreply commands come after the last reply expected (so the request is
  // sent whole before the exchange ends, however large they are) and when two
  // replies or more are expected (so a reply too many among them is seen: it
  // arrives where VERSION belongs).
  void Finish() override;

  // Readies the batch for the reply to `op` alone, whose command the caller sent
  // (a single operation's line, built on the stack): as Reset() then Add(),
  // without a request. A hit goes to `*hit`, op.result or an Item the caller lends.
  void ExpectOne(Operation& op, Item* hit);
  // This thread's batch for single operations, readied by ExpectOne(), reading
  // with `limits`. Kept from call to call, so a single operation allocates nothing;
  // valid until the thread's next ForOne(). Inline: every single operation asks.
  static TextBatch& ForOne(Operation& op, Item* hit, ParserLimits limits) {
    TextBatch& batch = LoneBatch<TextBatch>::Get(limits);
    batch.limits_ = limits;
    batch.parser_ = TextReplyParser(limits);
    batch.ExpectOne(op, hit);
    return batch;
  }

  // The usual replies first, whole; what is left (a reply still arriving, an
  // error, anything unusual) goes to the general loop, MemcachedBatch::Consume.
  Status Consume(net::ReadBuffer& buffer) override {
    if (usual_replies_ && !direct_active()) TakeUsual(buffer);
    if (done() && buffer.empty()) return Status::OK();
    return MemcachedBatch::Consume(buffer);
  }
  // Inline for the usual end: every reply came, no noreply command waits.
  void Settle(const Status& transport) override {
    if (!transport.ok() || !noreply_.empty()) SettleRest(transport);
  }

  // After Finish() or ExpectOne().
  bool done() const noexcept override { return next_ == expected_count_; }

 private:
  // One reply (or, for a gets line, one group of replies) still to come.
  struct Expected {
    std::size_t begin;     // index into ops_ of the group's first operation
    std::size_t first_op;  // index into ops_ of the first one still open
    std::size_t op_count;  // > 1 only for a gets group; those still open
    bool retrieval;
    bool closing = false;  // Finish()'s "version" line, no operation's
  };

  void CloseGetsLine();
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
    if (usual_replies_) TakeUsual(buffer);
    return Status::OK();
  }
  // Takes the usual replies off the front of `buffer`, whole ones only, each
  // routed as the general parser and OnReply() would route it; stops at
  // anything else. A single command's one line is taken inline, a batch's
  // replies out of line (TakeBatchReplies).
  void TakeUsual(net::ReadBuffer& buffer) {
    // A single command's one line: its operation is at hand, no list to walk.
    if (line_op_ != nullptr) {
      if (next_ == 0) TakeLine(buffer, *line_op_);
      return;
    }
    TakeBatchReplies(buffer);
  }
  // TakeUsual() for a batch: each expected reply in turn, while they are usual.
  void TakeBatchReplies(net::ReadBuffer& buffer);
  // The hits of `group` for the keys it expects next, in order, and the END
  // that closes it: true once the END is taken.
  bool TakeRetrievals(net::ReadBuffer& buffer, Expected& group);
  // The one-line reply `op` expects (UsualTextLine): true once taken.
  bool TakeLine(net::ReadBuffer& buffer, Operation& op) {
    const UsualLine line = UsualTextLine(buffer.data(), op.kind);
    // A line over max_line is the general parser's to refuse (tiny limits).
    if (line.consumed == 0 || line.consumed > limits_.max_line + 2) return false;
    op.status = Status::FromCode(line.code, {});
    if (line.code == StatusCode::kOk && (op.kind == OpKind::kIncr || op.kind == OpKind::kDecr)) {
      op.counter = line.number;
    }
    ++next_;
    buffer.Consume(line.consumed);
    return true;
  }
  // True when `reply`, an answer to `current`, may be followed by lines the
  // server sent for bytes it misread: the replies after it cannot be paired.
  bool MayLeaveOutOfStep(const Reply& reply, const Expected& current) const;
  // Gives every operation still unanswered a protocol error and ends the
  // exchange; the connection is dropped (poisoned), its unread bytes with it.
  void StopReading();
  Status OnRetrievalReply(Expected& group, const Reply& reply);
  Status OnSingleReply(Operation& op, const Reply& reply);
  // Settle() after a failed exchange or with noreply commands.
  void SettleRest(const Status& transport);
  // Whether ops_[i], answered (before `answered_end`), is a hit: a VALUE line
  // names its key, so it cannot be another command's answer, whatever the order
  // of the replies around it.
  bool AnsweredHit(std::size_t i, std::size_t answered_end) const noexcept {
    return i < answered_end && ops_[i]->kind == OpKind::kGet && ops_[i]->status.ok();
  }
  // Sizes the lists for one operation, sent with noreply (`silent`) or not.
  void Reshape(bool silent);

  // The shape of the lists: a batch's (Add), or one operation's (ExpectOne),
  // which the next ExpectOne() reuses as it is.
  enum class Shape : std::uint8_t { kBatch, kOne, kOneSilent };

  TextReplyParser parser_;
  BatchSettings settings_;
  std::vector<Operation*> ops_;  // in request order
  std::vector<Operation*> noreply_;
  std::vector<Expected> expected_;
  std::string keys_;  // the keys of a gets line; kept for its capacity
  std::size_t next_ = 0;
  std::size_t expected_count_ = 0;  // expected_.size(), once Finish()ed
  Operation* line_op_ = nullptr;    // ExpectOne(): the one command awaiting a line
  bool gets_open_ = false;
  bool silent_tail_ = false;  // noreply commands since the last reply expected
  bool usual_replies_;
  Shape shape_ = Shape::kBatch;
};

inline void TextBatch::ExpectOne(Operation& op, Item* hit) {
  next_ = 0;
  poisoned_ = false;
  ResetReader();
  NoteKind(op);
  LendItem(op, hit);
  // As Add(): a get is a gets line of one key; nothing comes back for noreply.
  // The lists of the last single operation are reused as they are when this
  // one has their shape.
  if (op.noreply && op.kind != OpKind::kGet) {
    if (shape_ != Shape::kOneSilent) [[unlikely]]
      Reshape(true);
    noreply_[0] = &op;
    expected_count_ = 0;
    line_op_ = nullptr;
    return;
  }
  if (shape_ != Shape::kOne) [[unlikely]]
    Reshape(false);
  ops_[0] = &op;
  expected_[0] = {0, 0, 1, op.kind == OpKind::kGet};
  expected_count_ = 1;
  line_op_ = op.kind == OpKind::kGet ? nullptr : &op;
}

}  // namespace cachet::memcached
