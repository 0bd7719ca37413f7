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
// be reported: the text protocol's noreply loses errors).
#pragma once

#include <string>
#include <vector>

#include "server_batch.h"
#include "text_parser.h"

namespace cachet::memcached {

class TextBatch final : public ServerBatch {
 public:
  explicit TextBatch(ParserLimits limits) : ServerBatch(limits), parser_(limits) {}

  void Reset(const BatchSettings& settings) override;
  void Add(Operation& op) override;
  void Finish() override;
  void Settle(const Status& transport) override;

  bool done() const noexcept override { return next_ == expected_.size(); }

 private:
  // One reply (or, for a gets line, one group of replies) still to come.
  struct Expected {
    std::size_t begin;     // index into ops_ of the group's first operation
    std::size_t first_op;  // index into ops_ of the first one still open
    std::size_t op_count;  // > 1 only for a gets group; those still open
    bool retrieval;
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
  // The hits of a gets line that come for the very key expected next, read
  // with QuickTextValue (quick_reply.h): the usual case of a batch read.
  void TakeUsualReplies(net::ReadBuffer& buffer) override;
  Status OnRetrievalReply(Expected& group, const Reply& reply);
  Status OnSingleReply(Operation& op, const Reply& reply);

  TextReplyParser parser_;
  BatchSettings settings_;
  std::vector<Operation*> ops_;  // in request order
  std::vector<Operation*> noreply_;
  std::vector<Expected> expected_;
  std::string keys_;  // the keys of a gets line; kept for its capacity
  std::size_t next_ = 0;
  bool gets_open_ = false;
};

}  // namespace cachet::memcached
