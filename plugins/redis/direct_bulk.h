// DirectBulk: a large bulk string of a batch's read received from the socket
// straight into its operation's string (net::DirectValue), instead of into the
// connection's buffer and copied out after the parser saw it whole.
//
// A batch reader whose parser needs more bytes asks Start() whether the front
// of the buffer is the header of a bulk string ("$102400\r\n") of which most is
// still to come; if so the operation is routed by that header alone, and the
// parser, which may have seen part of the reply, is reset to start afresh after
// it. The operation's status is an error until Continue() reports the value
// whole, so an exchange that fails in the middle never leaves a hit behind.
// Not thread-safe: one per batch reader.
#pragma once

#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/direct_value.h"
#include "cachet/net/read_buffer.h"
#include "resp_parser.h"

namespace cachet::redis {

class DirectBulk {
 public:
  // True when a direct read of `op`'s value began. REQUIRES: op.kind == kGet.
  bool Start(net::ReadBuffer& buffer, RespParser& parser, Operation& op, std::string_view where);
  bool active() const noexcept { return value_.active(); }
  // Takes the bytes of the direct read under way, if any: once the value and
  // its "\r\n" are in, the operation is a hit, ++*answered and active() is
  // false. Ok while bytes are still owed (active() stays true); protocol_error
  // for a bulk string not ended by "\r\n". A reader's Consume() starts with
  //   if (Status s = direct.Continue(...); !s.ok() || direct.active()) return s;
  Status Continue(net::ReadBuffer& buffer, std::string_view where, std::size_t* answered) {
    return active() ? ContinueActive(buffer, where, answered) : Status::OK();
  }

 private:
  Status ContinueActive(net::ReadBuffer& buffer, std::string_view where, std::size_t* answered);

  net::DirectValue value_;
  Operation* op_ = nullptr;
};

// The header of a bulk string at the front of `input`: true, with where its
// data starts and its size, for a whole "$<n>\r\n" line with 0 <= n <= the
// limit; false for anything else (left to the parser, which words the error).
bool BulkHeader(std::string_view input, const RespLimits& limits, std::size_t* data_offset,
                std::size_t* size);

}  // namespace cachet::redis
