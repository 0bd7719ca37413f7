// Tokyo Tyrant reply parser: fed bytes, answers need-more, one reply, or an error.
//
// The parser does no I/O. The caller starts it with the shape the request
// expects (ShapeOf), then calls Parse() with all the unconsumed bytes it has,
// starting at the reply's first byte, each time more arrive; the parser resumes
// where it stopped. On kDone, consumed() bytes belong to this reply and reply()
// describes it; its fields are offsets into the buffer, read with Field().
//
// Anything that casts doubt on the framing is kError with a protocol_error
// Status: a status byte other than 0 or 1, a negative or over-limit size or
// count, a misc failure that is not exactly 01 00 00 00 00. The caller must then
// drop the connection: the stream can no longer be trusted.
//
// A parser is reused from reply to reply without allocating once its field list
// has grown. Not thread-safe; one per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cachet/status.h"
#include "tt_protocol.h"

namespace cachet::tokyotyrant {

struct Reply {
  // A region of the parsed buffer.
  struct Span {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
  };

  bool ok = false;            // status byte 0
  std::int32_t int32 = 0;     // kInt32: the size (vsiz) or the sum (addint)
  std::uint64_t uint64 = 0;   // kUint64: rnum or size
  std::int64_t integer = 0;   // kDouble: integer part
  std::int64_t fraction = 0;  // kDouble: fraction x 10^12
  // kBytes: one field. kKeyValueList: key, value, key, value...
  // kKeyList and kMiscList: one field per element.
  std::vector<Span> fields;

  std::string_view Field(std::string_view buffer, std::size_t i) const {
    return buffer.substr(fields[i].offset, fields[i].size);
  }
};

enum class ParseState : std::uint8_t { kNeedMore, kDone, kError };

class ReplyParser {
 public:
  // Begins a new reply of `shape`. kNone replies are done at once, consuming 0.
  void Start(ReplyShape shape);

  ParseState Parse(std::string_view buffer);

  const Reply& reply() const noexcept { return reply_; }
  std::size_t consumed() const noexcept { return pos_; }
  // The protocol_error after kError.
  const Status& error() const noexcept { return error_; }

 private:
  enum class Stage : std::uint8_t { kStatus, kHead, kItemHead, kBody, kDone, kError };

  // Each step advances the stage and returns true, or returns false when it
  // needs more bytes or has failed.
  bool Step(std::string_view buffer);
  bool ReadStatus(std::string_view buffer);
  bool ReadHead(std::string_view buffer);
  bool ReadItemHead(std::string_view buffer);
  bool ReadBody(std::string_view buffer);
  bool NextItemOrDone();
  bool Fail(std::string_view why);
  // Reads a size (or count, up to `limit`) field at pos_; false after an error.
  // Over `limit`, a size or count of stored `data` is too_large, any other a
  // protocol error (out of step).
  bool TakeSize(std::string_view buffer, std::int32_t limit, std::uint32_t* size, bool data);
  // Stops with too_large: data past what cachet reads, the stream still in step.
  bool TooLarge(std::string_view why);
  bool Have(std::string_view buffer, std::size_t n) const { return buffer.size() - pos_ >= n; }

  ReplyShape shape_ = ReplyShape::kStatus;
  Stage stage_ = Stage::kStatus;
  std::size_t pos_ = 0;
  std::uint32_t items_left_ = 0;
  std::uint32_t body_sizes_[2] = {0, 0};  // the sizes read for the body to come
  int body_fields_ = 0;                   // how many of body_sizes_ are in use
  Reply reply_;
  Status error_;
};

}  // namespace cachet::tokyotyrant
