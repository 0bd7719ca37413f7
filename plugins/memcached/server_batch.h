// ServerBatch: the operations one batch sends to one server, as request bytes,
// and the reader that routes that server's replies back to them.
//
// The backend adds operations (already validated and routed here), calls
// Finish(), runs the request through FanOut with this object as the ReplyReader,
// then calls Settle() with the exchange's outcome: operations that got no reply
// because the exchange failed take that failure; nothing is guessed. One class
// per protocol (text_batch.h, meta_batch.h). Reused across batches by Reset(),
// so steady-state batches allocate nothing. Not thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/fan_out.h"
#include "cachet/net/request_buffer.h"
#include "reply.h"

namespace cachet::memcached {

// Per-batch settings the encoders need.
struct BatchSettings {
  bool binary_keys = false;   // meta only: keys go out base64-encoded
  bool touch_on_get = false;  // gets also reset the TTL (GetAndTouch)
  Ttl get_touch_ttl{0};
};

class ServerBatch : public net::ReplyReader {
 public:
  explicit ServerBatch(ParserLimits limits) : limits_(limits) {}

  virtual void Reset(const BatchSettings& settings) = 0;
  // REQUIRES: the key passed key_check and a store's value the size limit.
  virtual void Add(Operation& op) = 0;
  // Closes the request (an open gets line, the meta batch's mn).
  virtual void Finish() = 0;
  // After the exchange: `transport` is its status; unanswered operations get it.
  virtual void Settle(const Status& transport) = 0;
  // True after a reply that may leave the connection out of step (ERROR,
  // CLIENT_ERROR): the connection is dropped rather than reused.
  bool poisoned() const noexcept { return poisoned_; }
  bool empty() const noexcept { return request_.empty(); }

  const net::RequestBuffer& request() const noexcept { return request_; }

  // The reply loop both protocols share: parses complete replies off the front
  // of `buffer` and hands each to OnReply() until done() or more bytes are needed.
  Status Consume(net::ReadBuffer& buffer) final;

 protected:
  // One reply from the front of `input` (the protocol's parser).
  virtual ParseResult ParseReply(std::string_view input, Reply* reply) const = 0;
  // Routes one parsed reply to its operation; an error drops the connection.
  virtual Status OnReply(const Reply& reply) = 0;

  ParserLimits limits_;
  net::RequestBuffer request_;
  bool poisoned_ = false;
};

// Stores a value reply into an operation (value bytes copied into its buffer).
void FillItem(Operation& op, const Reply& reply);

}  // namespace cachet::memcached
