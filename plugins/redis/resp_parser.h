// RespParser: the one RESP2/RESP3 reply parser. Fed bytes, no I/O.
//
// The caller keeps the unread bytes of a connection in a buffer and calls Parse()
// with everything from the start of the current reply. The answer is one of:
//   kNeedMore  the reply is incomplete; call again with the same bytes plus more
//              (the buffer may move in memory; bytes_wanted() says how many bytes
//              would let parsing advance, so a large value is read in one go);
//   kReply     reply() holds one complete reply of consumed() bytes;
//   kError     error() says why; the stream cannot be trusted any more, so the
//              connection must be dropped. Parse() keeps answering kError until
//              Reset().
// Progress is kept between calls, so a reply that arrives in many pieces is
// scanned once. After kReply, the next Parse() starts a new reply at the front of
// its input: drop consumed() bytes first.
//
// Limits bound what a hostile or broken server can make the client allocate:
// bulk length, line length, nesting depth, elements per aggregate and nodes per
// reply. RESP3 attributes are parsed and skipped; streamed strings and aggregates
// (never sent by Redis) are rejected. Push frames ('>') are taken only when
// RespLimits::resp3 says the connection speaks RESP3; on RESP2 one is an error.
//
// A parser is not synchronized; use one per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cachet/status.h"
#include "resp_reply.h"

namespace cachet::redis {

struct RespLimits {
  std::size_t max_bulk_length = 512u << 20;  // Redis' own proto-max-bulk-len default
  std::size_t max_line_length = 64u << 10;   // a simple string, error or number line
  std::size_t max_depth = 16;                // nested aggregates
  std::size_t max_elements = 1u << 20;       // children of one aggregate
  std::size_t max_nodes = 4u << 20;          // nodes in one reply
  // The connection said HELLO 3: RESP3 push frames ('>') may come. On a RESP2
  // connection a push is a protocol error (it never comes there).
  bool resp3 = false;

  bool operator==(const RespLimits&) const = default;
};

class RespParser {
 public:
  enum class Outcome : std::uint8_t { kNeedMore, kReply, kError };

  explicit RespParser(RespLimits limits = {});

  // The limits for the next reply on. REQUIRES: between replies (idle()).
  void set_limits(const RespLimits& limits);
  const RespLimits& limits() const noexcept { return limits_; }

  // REQUIRES: `input` begins at the current reply and holds every byte passed
  // before since the last kReply or Reset(), unchanged.
  Outcome Parse(std::string_view input);

  // After kReply, until the next Parse() or Reset().
  const RespReply& reply() const noexcept { return reply_; }
  std::size_t consumed() const noexcept { return position_; }
  // After kNeedMore: the input size at which parsing can next advance.
  std::size_t bytes_wanted() const noexcept { return wanted_; }
  // After kError: protocol_error or too_large, with the reason.
  const Status& error() const noexcept { return error_; }

  // Forgets any partial reply and error: for a fresh connection.
  void Reset();
  // True between replies: nothing partial and no error, so Reset() is not needed.
  bool idle() const noexcept { return state_ == State::kStart || state_ == State::kDone; }

 private:
  enum class State : std::uint8_t { kStart, kInReply, kDone, kFailed };
  struct Frame {
    std::uint32_t node;       // index of the aggregate's node
    std::uint64_t remaining;  // children still to come
    bool attribute;           // an attribute map: discarded when complete
  };

  // What one parsing step achieved.
  enum class Step : std::uint8_t { kAdvanced, kNeedMore, kFailed };

  void StartReply();
  // The common whole scalar reply in one pass; false leaves it to the general path.
  bool ParseWholeScalar(std::string_view input);
  Step ParseLine(std::string_view input);
  Step ParseHeader(char kind, std::string_view body, std::size_t body_offset);
  Step FinishPayload(std::string_view input);
  Step AddScalar(RespType type, std::size_t offset, std::size_t length, std::int64_t integer);
  Step StartBulk(RespType type, std::string_view body);
  Step StartAggregate(RespType type, std::string_view body, std::uint64_t per_element);
  Step StartAttribute(std::string_view body);
  Step AddNode(RespType type, std::size_t offset, std::size_t length, std::int64_t integer);
  void ValueDone();
  Step Fail(Status status);
  Step NeedMore(std::size_t wanted);

  RespLimits limits_;
  State state_ = State::kStart;
  RespReply reply_;
  std::vector<Frame> stack_;
  std::size_t position_ = 0;     // bytes of the current reply parsed so far
  std::size_t scan_from_ = 0;    // where the search for the next line end resumes
  std::size_t payload_end_ = 0;  // nonzero: a bulk payload ends (with CRLF) here
  bool root_done_ = false;
  std::size_t wanted_ = 0;
  Status error_;
};

}  // namespace cachet::redis
