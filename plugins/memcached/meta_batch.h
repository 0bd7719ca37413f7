// MetaBatch: a server's share of a batch in the meta protocol.
//
// Every operation carries its index as the O token, and the request ends with
// mn, so replies match by token and MN says all have arrived. Reads and stores
// use q (quiet): a miss (EN) or a success (HD) is not sent at all, errors still
// are. noreply operations are quiet too, and since the batch still waits for MN,
// their errors are reported. Touch is never quiet: its hit (HD) and its miss
// (EN) would both vanish.
//
// memcached sends error lines without the O token; such an error belongs to the
// first operation after the last one that answered which can fail, and the
// connection is dropped afterwards rather than trusted.
#pragma once

#include <cstdint>
#include <vector>

#include "memcached_batch.h"
#include "meta_parser.h"

namespace cachet::memcached {

class MetaBatch final : public MemcachedBatch {
 public:
  explicit MetaBatch(ParserLimits limits) : MemcachedBatch(limits), parser_(limits) {}

  void Reset(const BatchSettings& settings) override;
  void Add(Operation& op) override;
  void Finish() override;
  void Settle(const Status& transport) override;

  bool done() const noexcept override { return done_; }

 private:
  struct Slot {
    Operation* op;
    bool quiet;     // silence means the default outcome below
    bool answered;  // a reply arrived for it
  };

  ParseResult ParseReply(std::string_view input, Reply* reply) const override {
    return parser_.Parse(input, reply);
  }
  bool ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                   std::uint64_t* size) const override {
    return parser_.ValueHeader(input, reply, data_offset, size);
  }
  Status OnReply(const Reply& reply) override;
  Status OnTokenReply(const Reply& reply);
  Status OnUntokenedError(const Reply& reply);

  MetaReplyParser parser_;
  BatchSettings settings_;
  std::vector<Slot> slots_;
  std::size_t after_last_answer_ = 0;
  bool done_ = false;
};

}  // namespace cachet::memcached
