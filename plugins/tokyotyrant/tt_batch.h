// TtServerBatch: the operations one batch sends to one Tokyo Tyrant server, as
// one pipelined request, and the reader that hands each reply to its operation.
//
// Mapping (docs/tokyotyrant.md): get = get, a run of consecutive gets = one mget
// (split at mget_max_keys), set = put (putnr when noreply, which has no reply),
// add = putkeep, append = putcat, remove = out, incr/decr = addint. Replies map
// onto Status in one place (Apply*): 01 on putkeep is not_stored, 01 on put or
// putcat io_error (the server failed to write), 01 on out is not_found, 01 on
// get is a miss, 01 on addint is invalid_argument, 01 on mget (which ttserver
// never fails) is protocol_error.
//
// The backend adds operations already checked and routed here, calls Finish(),
// and hands the batch to net::BatchRunner, which sends its request, feeds it the
// replies and calls Settle() with the exchange's status: operations left
// unanswered take it.
// A framing doubt poisons the batch so the connection is dropped. Reused across
// batches; not thread-safe.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/batch_runner.h"
#include "tt_options.h"
#include "tt_reply_parser.h"

namespace cachet::tokyotyrant {

class TtServerBatch final : public net::ServerBatch {
 public:
  // `server` ("host:port") is named by the errors its replies carry.
  TtServerBatch(const TokyoTyrantOptions& options, std::string server)
      : options_(options), server_(std::move(server)) {}

  void Reset();
  // REQUIRES: `op` passed the backend's checks. An operation that cannot be
  // encoded gets its error at once and sends nothing.
  void Add(Operation& op);
  // Closes the request. Writes without a reply (putnr) after the last reply
  // expected are followed by rnum, whose reply marks the end, so the request is
  // sent whole before the exchange ends, however large they are.
  void Finish();
  void Settle(const Status& transport) override;

  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return next_ == expected_.size(); }

  bool poisoned() const noexcept override { return poisoned_; }
  bool reads_only() const noexcept override { return !writes_; }
  const std::string& request() const noexcept { return request_; }
  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }

 private:
  // One reply to come: the operation it answers, a range of gets (mget), or
  // neither (the rnum after a batch's last putnr writes).
  struct Expected {
    ReplyShape shape;
    Operation* op = nullptr;
    std::size_t first_get = 0;
    std::size_t get_count = 0;
  };

  void AddStore(Operation& op);
  void AddCounter(Operation& op);
  void Expect(ReplyShape shape, Operation* op, Status encoded);
  // Encodes the pending run of gets as get (one) or mget (several).
  void FlushGets();
  void Apply(const Expected& e, std::string_view buffer);
  void ApplyMget(const Expected& e, std::string_view buffer);

  const TokyoTyrantOptions& options_;
  std::string server_;
  // "tokyotyrant host:port: ", the start of an error this batch's server caused.
  std::string Where() const { return "tokyotyrant " + server_ + ": "; }
  std::string request_;
  std::vector<Operation*> gets_;        // every get of the batch, in order
  std::size_t pending_gets_ = 0;        // gets_ not yet encoded
  std::vector<std::string_view> keys_;  // scratch for mget
  std::vector<Expected> expected_;
  std::vector<Operation*> noreply_;  // putnr writes: no reply, they take the exchange's outcome
  std::size_t next_ = 0;  // the reply being parsed
  bool started_ = false;  // parser_ started on expected_[next_]
  ReplyParser parser_;
  bool poisoned_ = false;
  bool writes_ = false;  // an operation other than a get was added
  bool silent_tail_ = false;  // putnr writes since the last reply expected
};

}  // namespace cachet::tokyotyrant
