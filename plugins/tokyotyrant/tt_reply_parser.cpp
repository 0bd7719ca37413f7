// Tokyo Tyrant reply parser (see tt_reply_parser.h).
#include "tt_reply_parser.h"

#include <string>

namespace cachet::tokyotyrant {

void ReplyParser::Start(ReplyShape shape) {
  shape_ = shape;
  stage_ = shape == ReplyShape::kNone ? Stage::kDone : Stage::kStatus;
  pos_ = 0;
  items_left_ = 0;
  body_fields_ = 0;
  reply_.ok = shape == ReplyShape::kNone;
  reply_.int32 = 0;
  reply_.uint64 = 0;
  reply_.integer = 0;
  reply_.fraction = 0;
  reply_.fields.clear();
  error_ = Status::OK();
}

ParseState ReplyParser::Parse(std::string_view buffer) {
  // Every step consumes bytes or moves to a later stage, so 2 steps per byte
  // plus a few stage changes always suffice; the bound only guards against a bug.
  const std::size_t max_steps = 2 * buffer.size() + 8;
  for (std::size_t steps = 0; stage_ != Stage::kDone && stage_ != Stage::kError; ++steps) {
    if (steps > max_steps)
      Fail("parser made no progress");
    else if (!Step(buffer))
      break;
  }
  if (stage_ == Stage::kDone) return ParseState::kDone;
  if (stage_ == Stage::kError) return ParseState::kError;
  return ParseState::kNeedMore;
}

bool ReplyParser::Step(std::string_view buffer) {
  switch (stage_) {
    case Stage::kStatus:
      return ReadStatus(buffer);
    case Stage::kHead:
      return ReadHead(buffer);
    case Stage::kItemHead:
      return ReadItemHead(buffer);
    case Stage::kBody:
      return ReadBody(buffer);
    case Stage::kDone:
    case Stage::kError:
      return false;
  }
  return Fail("unknown parser stage");
}

bool ReplyParser::ReadStatus(std::string_view buffer) {
  if (!Have(buffer, 1)) return false;
  const auto code = static_cast<unsigned char>(buffer[pos_]);
  if (code > 1) return Fail("status byte " + std::to_string(code) + " is neither 0 nor 1");
  ++pos_;
  reply_.ok = code == 0;
  // A failure is the status byte alone, except for misc, which adds a zero count.
  const bool has_head = reply_.ok || shape_ == ReplyShape::kMiscList;
  stage_ = has_head && shape_ != ReplyShape::kStatus ? Stage::kHead : Stage::kDone;
  return true;
}

bool ReplyParser::ReadHead(std::string_view buffer) {
  switch (shape_) {
    case ReplyShape::kBytes:
      if (!TakeSize(buffer, kMaxFieldSize, &body_sizes_[0], /*data=*/true)) return false;
      body_fields_ = 1;
      stage_ = Stage::kBody;
      return true;
    case ReplyShape::kInt32:
      if (!Have(buffer, 4)) return false;
      reply_.int32 = static_cast<std::int32_t>(ReadBigEndian32(buffer.data() + pos_));
      pos_ += 4;
      stage_ = Stage::kDone;
      return true;
    case ReplyShape::kDouble:
      if (!Have(buffer, 16)) return false;
      reply_.integer = static_cast<std::int64_t>(ReadBigEndian64(buffer.data() + pos_));
      reply_.fraction = static_cast<std::int64_t>(ReadBigEndian64(buffer.data() + pos_ + 8));
      pos_ += 16;
      stage_ = Stage::kDone;
      return true;
    case ReplyShape::kUint64:
      if (!Have(buffer, 8)) return false;
      reply_.uint64 = ReadBigEndian64(buffer.data() + pos_);
      pos_ += 8;
      stage_ = Stage::kDone;
      return true;
    case ReplyShape::kKeyValueList:
    case ReplyShape::kKeyList:
    case ReplyShape::kMiscList:
      // mget's count is bounded by its request; fwmkeys' and misc's are not.
      if (!TakeSize(buffer, kMaxItems, &items_left_, shape_ != ReplyShape::kKeyValueList)) {
        return false;
      }
      if (!reply_.ok && items_left_ != 0) return Fail("misc failure with a non-zero count");
      return NextItemOrDone();
    case ReplyShape::kNone:
    case ReplyShape::kStatus:
      break;
  }
  return Fail("reply shape has no head");
}

bool ReplyParser::ReadItemHead(std::string_view buffer) {
  body_fields_ = shape_ == ReplyShape::kKeyValueList ? 2 : 1;
  if (!Have(buffer, 4 * static_cast<std::size_t>(body_fields_))) return false;
  for (int i = 0; i < body_fields_; ++i) {
    // A key's size is bounded by the request (keys we asked for, or prefixed
    // keys); a value's or a misc element's is the stored data's.
    const bool data = !(shape_ == ReplyShape::kKeyList ||
                        (shape_ == ReplyShape::kKeyValueList && i == 0));
    if (!TakeSize(buffer, kMaxFieldSize, &body_sizes_[i], data)) return false;
  }
  // The key and the value together must still end within the 32-bit spans.
  std::uint64_t end = pos_;
  for (int i = 0; i < body_fields_; ++i) end += body_sizes_[i];
  if (end > UINT32_MAX) return TooLarge("a reply over the 4 GiB cachet reads");
  --items_left_;
  stage_ = Stage::kBody;
  return true;
}

bool ReplyParser::ReadBody(std::string_view buffer) {
  std::size_t total = 0;
  for (int i = 0; i < body_fields_; ++i) total += body_sizes_[i];
  if (!Have(buffer, total)) return false;
  for (int i = 0; i < body_fields_; ++i) {
    reply_.fields.push_back({static_cast<std::uint32_t>(pos_), body_sizes_[i]});
    pos_ += body_sizes_[i];
  }
  if (shape_ == ReplyShape::kBytes) {
    stage_ = Stage::kDone;
    return true;
  }
  return NextItemOrDone();
}

bool ReplyParser::NextItemOrDone() {
  stage_ = items_left_ == 0 ? Stage::kDone : Stage::kItemHead;
  return true;
}

bool ReplyParser::TakeSize(std::string_view buffer, std::int32_t limit, std::uint32_t* size,
                           bool data) {
  if (!Have(buffer, 4)) return false;
  const auto value = static_cast<std::int32_t>(ReadBigEndian32(buffer.data() + pos_));
  if (value < 0) return Fail("negative size " + std::to_string(value));
  if (value > limit) {
    const std::string what = std::string(limit == kMaxItems ? "count " : "size ") +
                             std::to_string(value) + " is over the " + std::to_string(limit);
    // ttserver's limits bind requests, not replies: stored data grown past them
    // by putcat is real. too_large, so the connection goes but the server is not
    // counted as failing (a protocol error would mark it dead).
    return data ? TooLarge(what + " cachet reads") : Fail(what + " its request allows");
  }
  // A reply whose offsets would not fit the 32-bit spans cannot be read.
  if (pos_ + 4 + static_cast<std::size_t>(value) > UINT32_MAX) {
    return TooLarge("a reply over the 4 GiB cachet reads");
  }
  pos_ += 4;
  *size = static_cast<std::uint32_t>(value);
  return true;
}

bool ReplyParser::TooLarge(std::string_view why) {
  stage_ = Stage::kError;
  error_ = Status::TooLarge("tokyotyrant reply: " + std::string(why));
  return false;
}

bool ReplyParser::Fail(std::string_view why) {
  stage_ = Stage::kError;
  error_ = Status::ProtocolError("tokyotyrant reply: " + std::string(why));
  return false;
}

}  // namespace cachet::tokyotyrant
