// MemcachedBatch: memcached's net::ServerBatch, the base both protocols' batches
// share (TextBatch, MetaBatch): the operations one batch sends to one server,
// as request bytes, and the reader that routes that server's replies back to them.
//
// The backend adds operations (already validated and routed here), calls
// Finish(), and hands the batch to net::BatchRunner, which sends its request,
// feeds it the replies and calls Settle() with the exchange's outcome:
// operations that got no reply because the exchange failed take that failure;
// nothing is guessed. One subclass
// per protocol (text_batch.h, meta_batch.h). Reused across batches by Reset(),
// so steady-state batches allocate nothing. Not thread-safe.
//
// A large value whose data is still to come when its header line has arrived is
// received straight into its operation's string (net::DirectValue): the
// operation is routed by the header alone, and its status stays an error until
// the whole data block and its "\r\n" are in.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/batch_runner.h"
#include "cachet/net/direct_value.h"
#include "cachet/net/request_buffer.h"
#include "reply.h"
#include "reply_status.h"

namespace cachet::memcached {

// Per-batch settings the encoders need.
struct BatchSettings {
  bool binary_keys = false;   // meta only: keys go out base64-encoded
  bool touch_on_get = false;  // gets also reset the TTL (GetAndTouch)
  Ttl get_touch_ttl{0};
};

class MemcachedBatch : public net::ServerBatch {
 public:
  explicit MemcachedBatch(ParserLimits limits) : limits_(limits) {}

  virtual void Reset(const BatchSettings& settings) = 0;
  // REQUIRES: the key passed key_check and a store's value the size limit.
  virtual void Add(Operation& op) = 0;
  // Closes the request (an open gets line, the meta batch's mn).
  virtual void Finish() = 0;
  // True after a reply that may leave the connection out of step (ERROR,
  // CLIENT_ERROR): the connection is dropped rather than reused.
  bool poisoned() const noexcept final { return poisoned_; }
  bool empty() const noexcept { return request_.empty(); }
  // Only gets were added (Add, ExpectOne): the batch may be sent twice.
  bool reads_only() const noexcept final { return !writes_; }

  // The server's "host:port", named by the errors its replies carry.
  void set_server(std::string server) { server_ = std::move(server); }

  const net::RequestBuffer& request() const noexcept { return request_; }
  void Request(std::vector<iovec>* out) const final { request_.Iovecs(out); }

  // The reply loop both protocols share: parses complete replies off the front
  // of `buffer` and hands each to OnReply() until done() or more bytes are needed.
  // Before each reply it lets the protocol take its usual ones (TakeUsualReplies);
  // a protocol may also take them before calling this (TextBatch, MetaBatch).
  Status Consume(net::ReadBuffer& buffer) override;

  // A hit for `op` goes to `*item` instead of op.result (an Item the caller of a
  // single Get lends, so its buffer is reused), until the next Reset().
  void LendItem(const Operation& op, Item* item) noexcept {
    lent_for_ = &op;
    lent_ = item;
  }

 protected:
  // One reply from the front of `input` (the protocol's parser).
  virtual ParseResult ParseReply(std::string_view input, Reply* reply) const = 0;
  // A value's header line at the front of `input`, whatever of its data has
  // arrived (the protocol's parser): false for anything else.
  virtual bool ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                           std::uint64_t* size) const = 0;
  // Routes one parsed reply to its operation; an error drops the connection.
  virtual Status OnReply(const Reply& reply) = 0;
  // The operation whose value `reply` (its header alone) announces, too large
  // to read; null when the header does not say. The exchange ends there: that
  // operation answers too_large (Settle leaves it), the others are unanswered.
  virtual Operation* OwnerOf(const Reply& reply) = 0;
  // Takes the replies a protocol can recognize without its general parser off
  // the front of `buffer`, whole ones only, each routed exactly as the parser and
  // OnReply() would route it; anything else is left to them. An error is
  // OnReply()'s and drops the connection, as the loop's own. None by default.
  virtual Status TakeUsualReplies(net::ReadBuffer& buffer) {
    (void)buffer;
    return Status::OK();
  }
  // Forgets a value left half-read by an earlier exchange, and a lent item.
  // Reset() calls it.
  void ResetReader() noexcept {
    writes_ = false;
    too_large_ = nullptr;
    stopped_reading_ = false;
    direct_.Reset();
    direct_op_ = nullptr;
    routing_direct_ = false;
    lent_for_ = nullptr;
  }
  // Add() and ExpectOne() note each operation: a write makes the batch one
  // that must not be sent twice.
  void NoteKind(const Operation& op) noexcept { writes_ = writes_ || op.kind != OpKind::kGet; }
  bool direct_active() const noexcept { return direct_.active(); }
  // A value still being received when the exchange failed gets the exchange's
  // status, as an unanswered operation would. Settle() calls it first.
  void SettleDirect(const Status& transport);

  // Stores a value reply into `op`: its bytes are copied into op's buffer, or,
  // for a reply routed by its header alone, will be received into it.
  void FillItem(Operation& op, const Reply& reply);
  // A whole hit: its bytes are copied into op's buffer. Inline: a batch read
  // stores one per key.
  void StoreHit(Operation& op, std::string_view data, std::uint32_t flags, std::uint64_t cas) {
    Item& item = ResultOf(op);
    item.flags = flags;
    item.cas = cas;
    // assign() reuses the capacity of the caller's Item.
    item.value.assign(data.data(), data.size());
    op.status = Status::OK();
  }
  // Where op's hit goes: op.result, or the item lent for it.
  Item& ResultOf(Operation& op) const noexcept { return &op == lent_for_ ? *lent_ : op.result; }

  // An error reply's status, naming the server.
  Status ErrorOf(const Reply& reply) const { return StatusFromReply(reply, server_); }

  ParserLimits limits_;
  net::RequestBuffer request_;
  std::string server_;  // set_server()
  bool poisoned_ = false;
  bool writes_ = false;  // an operation other than a get was added (NoteKind)
  // The protocol ended the exchange before the last reply (its stream may be
  // out of step): bytes still arriving are dropped with the connection.
  bool stopped_reading_ = false;
  // The operation whose value was too large to read (OwnerOf), or null.
  const Operation* too_large_ = nullptr;

 private:
  // Routes a large value by its header and has its data received direct; ok
  // and nothing done when the front of `buffer` is no such value.
  Status StartDirect(net::ReadBuffer& buffer);
  // Waits for a direct value's data; true in *done once it is whole.
  Status ContinueDirect(net::ReadBuffer& buffer, bool* done);

  net::DirectValue direct_;
  Operation* direct_op_ = nullptr;       // the operation the direct value is for
  bool routing_direct_ = false;          // OnReply is routing a header without its data
  const Operation* lent_for_ = nullptr;  // LendItem(): the operation whose hit goes to lent_
  Item* lent_ = nullptr;
};

// This thread's batch of type `Batch` for single operations (TextBatch::ForOne,
// MetaBatch::ForOne): made on first use, kept from call to call so that a single
// operation allocates nothing, freed when the thread ends.
template <class Batch>
class LoneBatch {
 public:
  // Inline: every single operation asks, and only the pointer is read.
  static Batch& Get(ParserLimits limits) { return batch_ != nullptr ? *batch_ : Make(limits); }

 private:
  [[gnu::noinline]] static Batch& Make(ParserLimits limits) {
    // Instantiated in the plugin, as the batch runner, so that the plugin's
    // code outlives the batch.
    thread_local std::unique_ptr<Batch> owner;
    owner = std::make_unique<Batch>(limits);
    batch_ = owner.get();
    return *owner;
  }

  // Only the pointer is read on each call: it needs no guard, as an object
  // would. initial-exec: one %fs-relative load instead of a __tls_get_addr
  // call; the plugin, loaded later, takes its 8 bytes from glibc's static TLS
  // surplus.
  static inline thread_local Batch* batch_ __attribute__((tls_model("initial-exec"))) = nullptr;
};

}  // namespace cachet::memcached
