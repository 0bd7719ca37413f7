// Walking a parsed RespReply: typed access and sibling iteration.
#include "resp_reply.h"

namespace cachet::redis {

std::string_view RespTypeName(RespType type) noexcept {
  switch (type) {
    case RespType::kSimpleString:
      return "simple_string";
    case RespType::kError:
      return "error";
    case RespType::kInteger:
      return "integer";
    case RespType::kBulkString:
      return "bulk_string";
    case RespType::kNull:
      return "null";
    case RespType::kArray:
      return "array";
    case RespType::kMap:
      return "map";
    case RespType::kSet:
      return "set";
    case RespType::kPush:
      return "push";
    case RespType::kDouble:
      return "double";
    case RespType::kBoolean:
      return "boolean";
    case RespType::kBigNumber:
      return "big_number";
    case RespType::kVerbatimString:
      return "verbatim_string";
    case RespType::kBulkError:
      return "bulk_error";
  }
  return "unknown";
}

const RespNode& RespValue::node() const noexcept { return reply_->nodes_[index_]; }

bool RespValue::IsError() const noexcept {
  return type() == RespType::kError || type() == RespType::kBulkError;
}

bool RespValue::IsString() const noexcept {
  RespType t = type();
  return t == RespType::kSimpleString || t == RespType::kBulkString ||
         t == RespType::kVerbatimString;
}

bool RespValue::IsAggregate() const noexcept {
  RespType t = type();
  return t == RespType::kArray || t == RespType::kMap || t == RespType::kSet ||
         t == RespType::kPush;
}

std::string_view RespValue::text() const noexcept {
  const RespNode& n = node();
  if (n.length == 0) return {};
  return reply_->bytes_.substr(n.offset, n.length);
}

RespValue::Iterator RespValue::end() const noexcept { return Iterator(reply_, node().end); }

RespValue::Iterator& RespValue::Iterator::operator++() {
  index_ = reply_->nodes_[index_].end;
  return *this;
}

RespValue RespValue::operator[](std::size_t i) const {
  Iterator it = begin();
  for (std::size_t k = 0; k < i; ++k) ++it;
  return *it;
}

bool RespValue::FindField(std::string_view name, RespValue* value) const {
  if (!IsAggregate()) return false;
  for (Iterator it = begin(), stop = end(); it != stop; ++it) {
    RespValue key = *it;
    if (++it == stop) return false;
    if (key.text() == name) {
      *value = *it;
      return true;
    }
  }
  return false;
}

}  // namespace cachet::redis
