// The RESP2/RESP3 reply parser: an incremental, bounded state machine over a
// caller-owned buffer. See resp_parser.h for the contract.
#include "resp_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>
#include <system_error>

namespace cachet::redis {

namespace {

// Whether `c` starts a RESP2 or RESP3 frame (ParseHeader's cases).
bool IsTypeByte(char c) {
  return std::string_view("+-:$=!*%~>|_#,(").find(c) != std::string_view::npos;
}

// Strict decimal: optional '-', digits only, no overflow.
bool ParseInt64(std::string_view text, std::int64_t* value) {
  if (text.empty()) return false;
  // Up to 18 digits cannot overflow, so the short numbers of nearly every
  // reply (lengths, counts, counters) take a plain loop.
  const bool negative = text.front() == '-';
  if (text.size() - negative <= 18) {
    if (text.size() == std::size_t{negative}) return false;
    std::int64_t number = 0;
    for (std::size_t i = negative; i < text.size(); ++i) {
      const unsigned digit = static_cast<unsigned char>(text[i]) - unsigned{'0'};
      if (digit > 9) return false;
      number = number * 10 + static_cast<std::int64_t>(digit);
    }
    *value = negative ? -number : number;
    return true;
  }
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

bool IsValidDouble(std::string_view text) {
  if (text == "inf" || text == "-inf" || text == "nan") return true;
  if (text.empty()) return false;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

bool IsValidBigNumber(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Quoted(std::string_view text) {
  constexpr std::size_t kShown = 32;
  std::string out = "'";
  for (char c : text.substr(0, kShown)) {
    bool printable = c >= 0x20 && c < 0x7f;
    out += printable ? c : '?';
  }
  if (text.size() > kShown) out += "...";
  out += "'";
  return out;
}

}  // namespace

RespParser::RespParser(RespLimits limits) { set_limits(limits); }

void RespParser::set_limits(const RespLimits& limits) {
  limits_ = limits;
  // Node counts are stored in 32 bits.
  limits_.max_elements = std::min<std::size_t>(limits_.max_elements, UINT32_MAX / 2);
  limits_.max_nodes = std::min<std::size_t>(limits_.max_nodes, UINT32_MAX - 1);
}

void RespParser::Reset() {
  state_ = State::kStart;
  error_ = Status::OK();
  StartReply();
  state_ = State::kStart;
}

void RespParser::StartReply() {
  reply_.nodes_.clear();
  reply_.bytes_ = {};
  stack_.clear();
  position_ = 0;
  scan_from_ = 0;
  payload_end_ = 0;
  root_done_ = false;
  wanted_ = 0;
  state_ = State::kInReply;
}

RespParser::Outcome RespParser::Parse(std::string_view input) {
  if (state_ == State::kFailed) return Outcome::kError;
  if (state_ != State::kInReply) {
    if (ParseWholeScalar(input)) return Outcome::kReply;
    StartReply();
  }
  // Every kAdvanced step consumes at least one byte of `input`, so this loop ends.
  while (!root_done_) {
    Step step = payload_end_ != 0 ? FinishPayload(input) : ParseLine(input);
    if (step == Step::kNeedMore) return Outcome::kNeedMore;
    if (step == Step::kFailed) return Outcome::kError;
  }
  state_ = State::kDone;
  reply_.bytes_ = input.substr(0, position_);
  wanted_ = 0;
  return Outcome::kReply;
}

// Most replies are one complete bulk string, integer or status line (GET, SET,
// INCR, each reply of a pipeline): this reads such a reply straight into a
// single node. Anything else, incomplete, oversized or malformed returns false
// with nothing changed, and the general state machine takes it (and words any
// error), so both paths accept exactly the same input.
bool RespParser::ParseWholeScalar(std::string_view input) {
  if (input.size() < 4 || limits_.max_nodes == 0) return false;
  const char kind = input[0];
  if (kind != '$' && kind != ':' && kind != '+' && kind != '-') return false;
  const std::size_t searched = std::min(input.size(), limits_.max_line_length + 3);
  const void* found = std::memchr(input.data() + 1, '\n', searched - 1);
  if (found == nullptr) return false;
  const std::size_t newline =
      static_cast<std::size_t>(static_cast<const char*>(found) - input.data());
  if (newline < 2 || input[newline - 1] != '\r') return false;
  const std::string_view body = input.substr(1, newline - 2);
  if (body.size() > limits_.max_line_length) return false;
  RespNode node;
  node.end = 1;
  std::size_t end = newline + 1;
  if (kind == '$') {
    std::int64_t length = 0;
    if (!ParseInt64(body, &length) || length < -1) return false;
    if (length == -1) {
      node.type = RespType::kNull;
    } else {
      if (static_cast<std::uint64_t>(length) > limits_.max_bulk_length) return false;
      const auto size = static_cast<std::size_t>(length);
      if (input.size() - end < size + 2) return false;
      if (input[end + size] != '\r' || input[end + size + 1] != '\n') return false;
      node.type = RespType::kBulkString;
      node.offset = end;
      node.length = size;
      end += size + 2;
    }
  } else if (kind == ':') {
    if (!ParseInt64(body, &node.integer)) return false;
    node.type = RespType::kInteger;
    node.offset = 1;
    node.length = body.size();
  } else {
    node.type = kind == '+' ? RespType::kSimpleString : RespType::kError;
    node.offset = 1;
    node.length = body.size();
  }
  reply_.nodes_.clear();
  reply_.nodes_.push_back(node);
  reply_.bytes_ = input.substr(0, end);
  position_ = end;
  wanted_ = 0;
  state_ = State::kDone;
  return true;
}

RespParser::Step RespParser::ParseLine(std::string_view input) {
  std::size_t from = std::max(scan_from_, position_);
  const void* found = nullptr;
  if (from < input.size()) found = std::memchr(input.data() + from, '\n', input.size() - from);
  if (found == nullptr) {
    // Bytes that start no frame are refused at once, not waited on for a line end.
    if (position_ < input.size() && !IsTypeByte(input[position_])) {
      return Fail(Status::ProtocolError("unknown RESP type byte in " +
                                        Quoted(input.substr(position_, 16))));
    }
    scan_from_ = std::max(from, input.size());
    // A type byte, the body and CRLF.
    if (input.size() - position_ > limits_.max_line_length + 3) {
      return Fail(Status::ProtocolError("RESP line longer than " +
                                        std::to_string(limits_.max_line_length) + " bytes"));
    }
    return NeedMore(input.size() + 1);
  }
  std::size_t newline = static_cast<const char*>(found) - input.data();
  std::size_t line_length = newline - position_;  // type byte, body and '\r'
  if (line_length < 2 || input[newline - 1] != '\r') {
    return Fail(Status::ProtocolError("RESP line not ended by CRLF: " +
                                      Quoted(input.substr(position_, line_length))));
  }
  std::size_t body_length = line_length - 2;
  if (body_length > limits_.max_line_length) {
    return Fail(Status::ProtocolError("RESP line longer than " +
                                      std::to_string(limits_.max_line_length) + " bytes"));
  }
  char kind = input[position_];
  std::size_t body_offset = position_ + 1;
  position_ = newline + 1;
  scan_from_ = position_;
  return ParseHeader(kind, input.substr(body_offset, body_length), body_offset);
}

RespParser::Step RespParser::ParseHeader(char kind, std::string_view body,
                                         std::size_t body_offset) {
  std::int64_t number = 0;
  switch (kind) {
    case '+':
      return AddScalar(RespType::kSimpleString, body_offset, body.size(), 0);
    case '-':
      return AddScalar(RespType::kError, body_offset, body.size(), 0);
    case ':':
      if (!ParseInt64(body, &number)) break;
      return AddScalar(RespType::kInteger, body_offset, body.size(), number);
    case '$':
      return StartBulk(RespType::kBulkString, body);
    case '=':
      return StartBulk(RespType::kVerbatimString, body);
    case '!':
      return StartBulk(RespType::kBulkError, body);
    case '*':
      return StartAggregate(RespType::kArray, body, 1);
    case '%':
      return StartAggregate(RespType::kMap, body, 2);
    case '~':
      return StartAggregate(RespType::kSet, body, 1);
    case '>':
      // Pushes come only on a RESP3 (HELLO 3) connection: on RESP2 the stream
      // is not what the server speaks to us, and cannot be trusted.
      if (!limits_.resp3) {
        return Fail(Status::ProtocolError("RESP3 push frame on a RESP2 connection"));
      }
      // A push is out of band: only ever a frame of its own, never inside a reply.
      for (const Frame& open : stack_) {
        if (!open.attribute) return Fail(Status::ProtocolError("RESP3 push inside a reply"));
      }
      return StartAggregate(RespType::kPush, body, 1);
    case '|':
      return StartAttribute(body);
    case '_':
      if (!body.empty()) break;
      return AddScalar(RespType::kNull, 0, 0, 0);
    case '#':
      if (body != "t" && body != "f") break;
      return AddScalar(RespType::kBoolean, 0, 0, body == "t" ? 1 : 0);
    case ',':
      if (!IsValidDouble(body)) break;
      return AddScalar(RespType::kDouble, body_offset, body.size(), 0);
    case '(':
      if (!IsValidBigNumber(body)) break;
      return AddScalar(RespType::kBigNumber, body_offset, body.size(), 0);
    default:
      return Fail(Status::ProtocolError("unknown RESP type byte in " +
                                        Quoted(std::string(1, kind) + std::string(body))));
  }
  return Fail(Status::ProtocolError("malformed RESP line " +
                                    Quoted(std::string(1, kind) + std::string(body))));
}

RespParser::Step RespParser::AddNode(RespType type, std::size_t offset, std::size_t length,
                                     std::int64_t integer) {
  if (reply_.nodes_.size() >= limits_.max_nodes) {
    return Fail(Status::ProtocolError("RESP reply has more than " +
                                      std::to_string(limits_.max_nodes) + " elements"));
  }
  RespNode node;
  node.type = type;
  node.end = static_cast<std::uint32_t>(reply_.nodes_.size() + 1);
  node.integer = integer;
  node.offset = offset;
  node.length = length;
  reply_.nodes_.push_back(node);
  return Step::kAdvanced;
}

RespParser::Step RespParser::AddScalar(RespType type, std::size_t offset, std::size_t length,
                                       std::int64_t integer) {
  if (AddNode(type, offset, length, integer) == Step::kFailed) return Step::kFailed;
  ValueDone();
  return Step::kAdvanced;
}

RespParser::Step RespParser::StartBulk(RespType type, std::string_view body) {
  if (body == "?") return Fail(Status::ProtocolError("streamed RESP3 strings are not supported"));
  std::int64_t length = 0;
  if (!ParseInt64(body, &length)) {
    return Fail(Status::ProtocolError("bad RESP bulk length " + Quoted(body)));
  }
  // RESP2 spells a missing value as a bulk string of length -1.
  if (length == -1 && type == RespType::kBulkString) return AddScalar(RespType::kNull, 0, 0, 0);
  if (length < 0 || (type == RespType::kVerbatimString && length < 4)) {
    return Fail(Status::ProtocolError("bad RESP bulk length " + Quoted(body)));
  }
  if (static_cast<std::uint64_t>(length) > limits_.max_bulk_length) {
    return Fail(Status::TooLarge("RESP bulk string of " + std::to_string(length) +
                                 " bytes is over the limit of " +
                                 std::to_string(limits_.max_bulk_length)));
  }
  if (AddNode(type, position_, static_cast<std::size_t>(length), 0) == Step::kFailed) {
    return Step::kFailed;
  }
  payload_end_ = position_ + static_cast<std::size_t>(length) + 2;
  return Step::kAdvanced;
}

RespParser::Step RespParser::FinishPayload(std::string_view input) {
  if (input.size() < payload_end_) return NeedMore(payload_end_);
  if (input[payload_end_ - 2] != '\r' || input[payload_end_ - 1] != '\n') {
    return Fail(Status::ProtocolError("RESP bulk string not followed by CRLF"));
  }
  RespNode& node = reply_.nodes_.back();
  if (node.type == RespType::kVerbatimString) {
    // "txt:" or "mkd:": the format is three bytes and a colon.
    if (input[node.offset + 3] != ':') {
      return Fail(Status::ProtocolError("RESP verbatim string without a format prefix"));
    }
    node.offset += 4;
    node.length -= 4;
  }
  position_ = payload_end_;
  scan_from_ = position_;
  payload_end_ = 0;
  ValueDone();
  return Step::kAdvanced;
}

RespParser::Step RespParser::StartAggregate(RespType type, std::string_view body,
                                            std::uint64_t per_element) {
  if (body == "?") {
    return Fail(Status::ProtocolError("streamed RESP3 aggregates are not supported"));
  }
  std::int64_t count = 0;
  if (!ParseInt64(body, &count)) {
    return Fail(Status::ProtocolError("bad RESP element count " + Quoted(body)));
  }
  // RESP2 spells a missing array as length -1.
  if (count == -1 && type == RespType::kArray) return AddScalar(RespType::kNull, 0, 0, 0);
  if (count < 0) return Fail(Status::ProtocolError("bad RESP element count " + Quoted(body)));
  if (static_cast<std::uint64_t>(count) > limits_.max_elements / per_element) {
    return Fail(Status::ProtocolError("RESP aggregate of " + std::to_string(count) +
                                      " elements is over the limit of " +
                                      std::to_string(limits_.max_elements)));
  }
  if (stack_.size() >= limits_.max_depth) {
    return Fail(Status::ProtocolError("RESP reply nested deeper than " +
                                      std::to_string(limits_.max_depth)));
  }
  auto index = static_cast<std::uint32_t>(reply_.nodes_.size());
  if (AddNode(type, 0, 0, 0) == Step::kFailed) return Step::kFailed;
  std::uint64_t children = static_cast<std::uint64_t>(count) * per_element;
  reply_.nodes_.back().count = static_cast<std::uint32_t>(children);
  if (children == 0) {
    ValueDone();
  } else {
    stack_.push_back(Frame{index, children, false});
  }
  return Step::kAdvanced;
}

RespParser::Step RespParser::StartAttribute(std::string_view body) {
  std::int64_t count = 0;
  if (!ParseInt64(body, &count) || count < 0) {
    return Fail(Status::ProtocolError("bad RESP attribute count " + Quoted(body)));
  }
  if (static_cast<std::uint64_t>(count) > limits_.max_elements / 2) {
    return Fail(Status::ProtocolError("RESP attribute over the element limit"));
  }
  if (count == 0) return Step::kAdvanced;
  if (stack_.size() >= limits_.max_depth) {
    return Fail(Status::ProtocolError("RESP reply nested deeper than " +
                                      std::to_string(limits_.max_depth)));
  }
  // The attribute is parsed like a map so its size is checked, then dropped.
  auto index = static_cast<std::uint32_t>(reply_.nodes_.size());
  if (AddNode(RespType::kMap, 0, 0, 0) == Step::kFailed) return Step::kFailed;
  stack_.push_back(Frame{index, static_cast<std::uint64_t>(count) * 2, true});
  return Step::kAdvanced;
}

void RespParser::ValueDone() {
  while (!stack_.empty()) {
    Frame& frame = stack_.back();
    if (--frame.remaining > 0) return;
    std::uint32_t index = frame.node;
    bool attribute = frame.attribute;
    stack_.pop_back();
    if (attribute) {
      // The value the attribute describes is still to come, in the same place.
      reply_.nodes_.resize(index);
      return;
    }
    reply_.nodes_[index].end = static_cast<std::uint32_t>(reply_.nodes_.size());
  }
  root_done_ = true;
}

RespParser::Step RespParser::Fail(Status status) {
  state_ = State::kFailed;
  error_ = std::move(status);
  return Step::kFailed;
}

RespParser::Step RespParser::NeedMore(std::size_t wanted) {
  wanted_ = wanted;
  return Step::kNeedMore;
}

}  // namespace cachet::redis
