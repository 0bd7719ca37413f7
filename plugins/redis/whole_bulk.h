// ReadWholeBulk: one whole bulk string or nil at the front of a buffer, read
// without the general reply parser.
//
// An MGET reply is an array of such elements, one per key, so a batch read
// spends most of its parsing here: "$<n>\r\n<n bytes>\r\n" for a value,
// "$-1\r\n" (RESP2) or "_\r\n" (RESP3) for a miss. This reader builds no
// reply nodes and keeps no state. Anything it does not take whole (an element
// not complete yet, another type, a length it would have to reject) it leaves
// alone, returning false, for RespParser to read or to word the error. So it
// accepts exactly a subset of what the parser accepts, with the same meaning
// and the same number of bytes consumed, under the same RespLimits.
// Inline: it runs once per key of a batch read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resp_parser.h"

namespace cachet::redis {

struct WholeBulk {
  std::string_view data;  // the value's bytes, inside the input; empty for a nil
  std::size_t size = 0;   // bytes of the element: header, data and CRLFs
  bool nil = false;
};

namespace whole_bulk_detail {

// Up to 19 digits cannot overflow 64 bits; a longer length is the parser's.
inline constexpr std::size_t kMaxDigits = 19;

inline bool IsCrLf(const char* at) { return at[0] == '\r' && at[1] == '\n'; }

// A nil spelled `size` bytes long, whose line body is `body` bytes long.
inline bool Nil(std::size_t size, std::size_t body, const RespLimits& limits, WholeBulk* out) {
  if (body > limits.max_line_length) return false;
  out->data = {};
  out->size = size;
  out->nil = true;
  return true;
}

}  // namespace whole_bulk_detail

// True with *out filled when `input` starts with a whole bulk string or nil
// that RespParser would accept under `limits`; false, with *out unspecified,
// for anything else.
inline bool ReadWholeBulk(std::string_view input, const RespLimits& limits, WholeBulk* out) {
  using whole_bulk_detail::IsCrLf;
  const char* p = input.data();
  const std::size_t n = input.size();
  // The parser refuses every reply when no node is allowed.
  if (n < 3 || limits.max_nodes == 0) return false;
  if (p[0] == '_') return IsCrLf(p + 1) && whole_bulk_detail::Nil(3, 0, limits, out);
  if (p[0] != '$') return false;
  if (p[1] == '-') {
    return n >= 5 && p[2] == '1' && IsCrLf(p + 3) && whole_bulk_detail::Nil(5, 2, limits, out);
  }
  std::uint64_t length = 0;
  std::size_t i = 1;
  const std::size_t digits_end =
      n < whole_bulk_detail::kMaxDigits + 1 ? n : whole_bulk_detail::kMaxDigits + 1;
  for (; i < digits_end; ++i) {
    const unsigned digit = static_cast<unsigned char>(p[i]) - unsigned{'0'};
    if (digit > 9) break;
    length = length * 10 + digit;
  }
  const std::size_t digits = i - 1;
  if (digits == 0 || n - i < 2 || !IsCrLf(p + i)) return false;
  if (digits > limits.max_line_length || length > limits.max_bulk_length) return false;
  const std::size_t start = i + 2;
  // length < 10^19, so neither sum below can wrap.
  if (n - start < length + 2 || !IsCrLf(p + start + length)) return false;
  out->data = std::string_view(p + start, static_cast<std::size_t>(length));
  out->size = start + static_cast<std::size_t>(length) + 2;
  out->nil = false;
  return true;
}

}  // namespace cachet::redis
