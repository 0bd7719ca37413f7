// RespReply: one parsed Redis reply (RESP2 or RESP3) as a flat tree of nodes.
//
// The parser (resp_parser.h) fills a RespReply in pre-order: an aggregate's
// children follow it, and every node records where its subtree ends, so walking a
// reply never allocates and the node vector is reused from reply to reply.
// Strings are not copied: text() points into the bytes the parser was given, and
// those bytes must stay unchanged while the caller reads the reply.
//
// RespValue is a cheap handle (reply pointer and node index); it must not outlive
// its RespReply. Neither type is synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

namespace cachet::redis {

enum class RespType : std::uint8_t {
  kSimpleString,    // +OK
  kError,           // -ERR message
  kInteger,         // :42
  kBulkString,      // $3 foo
  kNull,            // $-1 or *-1 in RESP2, _ in RESP3
  kArray,           // *n
  kMap,             // %n: n key/value pairs, stored as 2n children
  kSet,             // ~n
  kPush,            // >n: out-of-band data, RESP3 only
  kDouble,          // ,3.14 (kept as text)
  kBoolean,         // #t or #f
  kBigNumber,       // (12345678901234567890 (kept as text)
  kVerbatimString,  // =n txt:... (text() drops the "txt:" format prefix)
  kBulkError,       // !n message
};

// "simple_string", "error", ...
std::string_view RespTypeName(RespType type) noexcept;

struct RespNode {
  RespType type = RespType::kNull;
  std::uint32_t count = 0;   // number of children of an aggregate
  std::uint32_t end = 0;     // index one past the last node of this subtree
  std::int64_t integer = 0;  // kInteger; kBoolean as 0 or 1
  std::size_t offset = 0;    // text: position in the reply's bytes
  std::size_t length = 0;    // text: length in bytes
};

class RespReply;

class RespValue {
 public:
  RespValue(const RespReply* reply, std::uint32_t index) : reply_(reply), index_(index) {}

  RespType type() const noexcept { return node().type; }
  bool IsNull() const noexcept { return type() == RespType::kNull; }
  // Both error kinds: simple (-) and bulk (!).
  bool IsError() const noexcept;
  // Simple, bulk and verbatim strings.
  bool IsString() const noexcept;
  // Array, map, set and push: the types with children.
  bool IsAggregate() const noexcept;

  // The bytes of a string, error, double or big number; empty for other types.
  std::string_view text() const noexcept;
  std::int64_t integer() const noexcept { return node().integer; }
  bool boolean() const noexcept { return node().integer != 0; }

  // Number of children (2n for a map of n pairs); 0 for scalars.
  std::size_t size() const noexcept { return node().count; }

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = RespValue;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = RespValue;

    Iterator() = default;
    Iterator(const RespReply* reply, std::uint32_t index) : reply_(reply), index_(index) {}
    RespValue operator*() const { return RespValue(reply_, index_); }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.index_ == b.index_; }

   private:
    const RespReply* reply_ = nullptr;
    std::uint32_t index_ = 0;
  };

  // Children in order; empty for scalars.
  Iterator begin() const noexcept { return Iterator(reply_, index_ + 1); }
  Iterator end() const noexcept;

  // The i-th child, walking siblings: O(i). REQUIRES: i < size().
  RespValue operator[](std::size_t i) const;

  // For a map, or a RESP2 array of alternating names and values: the value after
  // the first name equal to `name`. False when there is none.
  bool FindField(std::string_view name, RespValue* value) const;

 private:
  const RespNode& node() const noexcept;

  const RespReply* reply_;
  std::uint32_t index_;
};

class RespReply {
 public:
  RespReply() = default;

  bool empty() const noexcept { return nodes_.empty(); }
  // REQUIRES: !empty().
  RespValue root() const noexcept { return RespValue(this, 0); }
  // The encoded reply exactly as it came off the wire.
  std::string_view bytes() const noexcept { return bytes_; }
  std::size_t node_count() const noexcept { return nodes_.size(); }

 private:
  friend class RespParser;
  friend class RespValue;

  std::vector<RespNode> nodes_;
  std::string_view bytes_;
};

}  // namespace cachet::redis
