// Reply lines: what both memcached parsers share. Finding a complete line,
// comparing a few bytes a word at a time, splitting tokens, strict decimal
// numbers, the error lines of both protocols, and a printable excerpt of bad
// bytes for messages; and for the readers of the usual replies (text_usual.h,
// meta_usual.h), expected bytes and numbers read in one pass. No I/O.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "reply.h"

namespace cachet::memcached {

// The first line of `input` (without "\r\n") and the bytes it spans with "\r\n".
// kNeedMore while no '\n' arrived within `max_line` bytes; kError for a line
// that is too long or ends in a bare '\n'.
ParseResult FindLine(std::string_view input, std::size_t max_line, std::string_view* line);

// For a line whose end has not arrived: kNeedMore while `partial` can still
// become a reply that starts with one of `words` (a whole word before its first
// space; a prefix of one before it), or a bare number when `number`; otherwise
// the error, so a server's garbage without a line end is refused at once rather
// than waited for until the I/O timeout.
ParseResult PartialLine(std::string_view partial, std::initializer_list<std::string_view> words,
                        bool number);

namespace reply_line_detail {

inline constexpr std::size_t kMaxDigits = 20;  // the widest 64-bit decimal

template <class Word>
inline Word Load(const char* at) {
  Word word;
  std::memcpy(&word, at, sizeof(word));
  return word;
}

// Whether the `n` bytes at `a` and `b` are equal: inline, a word at a time (the last may overlap).
inline bool SameBytes(const char* a, const char* b, std::size_t n) {
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
      if (Load<std::uint64_t>(a + i) != Load<std::uint64_t>(b + i)) return false;
    }
    return n % 8 == 0 || Load<std::uint64_t>(a + n - 8) == Load<std::uint64_t>(b + n - 8);
  }
  if (n >= 4) {
    return Load<std::uint32_t>(a) == Load<std::uint32_t>(b) &&
           Load<std::uint32_t>(a + n - 4) == Load<std::uint32_t>(b + n - 4);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace reply_line_detail

// Splits off the text up to the first space (the whole rest if none). Inline,
// with a plain loop: tokens are a few bytes long, shorter than a memchr call's setup.
inline std::string_view NextToken(std::string_view* rest) {
  const char* begin = rest->data();
  const char* end = begin + rest->size();
  const char* space = begin;
  while (space != end && *space != ' ') ++space;
  *rest = space == end ? std::string_view() : std::string_view(space + 1, end - space - 1);
  return std::string_view(begin, static_cast<std::size_t>(space - begin));
}

// Strict unsigned decimals: digits only, no sign, no overflow. A plain loop
// rather than std::from_chars, which is general (bases, partial input) and
// several times slower on the short numbers of every reply line.
inline bool ParseU64(std::string_view text, std::uint64_t* out) {
  // 19 digits always fit in 64 bits; only a 20-digit number can overflow.
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t value = 0;
  for (char c : text.substr(0, 19)) {
    const unsigned digit = static_cast<unsigned char>(c) - unsigned{'0'};
    if (digit > 9) return false;
    value = value * 10 + digit;
  }
  if (text.size() == 20) {
    const unsigned digit = static_cast<unsigned char>(text[19]) - unsigned{'0'};
    if (digit > 9 || __builtin_mul_overflow(value, 10u, &value) ||
        __builtin_add_overflow(value, digit, &value)) {
      return false;
    }
  }
  *out = value;
  return true;
}

inline bool ParseU32(std::string_view text, std::uint32_t* out) {
  std::uint64_t wide = 0;
  if (!ParseU64(text, &wide) || wide > UINT32_MAX) return false;
  *out = static_cast<std::uint32_t>(wide);
  return true;
}

// How a reader that knows the shape of the reply it expects (the usual
// replies, text_usual.h and meta_usual.h) fares on the bytes at hand.
enum class QuickOutcome : std::uint8_t {
  kNeedMore,  // a prefix of a usual reply: read more
  kDone,      // one whole usual reply
  kUnusual,   // anything else: the general parser's to judge
};

// Whether `input`, from `*pos`, continues with `expected`: kDone (and *pos moved
// past it), kNeedMore when the input ends inside it, kUnusual on a difference.
inline QuickOutcome Expect(std::string_view input, std::size_t* pos, std::string_view expected) {
  const std::size_t available = input.size() - *pos;
  const std::size_t compared = available < expected.size() ? available : expected.size();
  if (std::memcmp(input.data() + *pos, expected.data(), compared) != 0) {
    return QuickOutcome::kUnusual;
  }
  if (compared < expected.size()) return QuickOutcome::kNeedMore;
  *pos += expected.size();
  return QuickOutcome::kDone;
}

// Expect() for a literal: when the input holds all of it, the comparison has a
// constant size, which the compiler turns into a load and compare or two.
template <std::size_t N>
inline QuickOutcome ExpectLiteral(std::string_view input, std::size_t* pos,
                                  const char (&literal)[N]) {
  constexpr std::size_t kLength = N - 1;
  if (input.size() - *pos < kLength) return Expect(input, pos, literal);
  if (!reply_line_detail::SameBytes(input.data() + *pos, literal, kLength)) {
    return QuickOutcome::kUnusual;
  }
  *pos += kLength;
  return QuickOutcome::kDone;
}

// Whether `input` begins with the whole `literal`.
template <std::size_t N>
inline bool StartsWith(std::string_view input, const char (&literal)[N]) {
  return input.size() >= N - 1 && reply_line_detail::SameBytes(input.data(), literal, N - 1);
}

// A decimal of 1 to 20 digits from `*pos`, without overflow, up to the first
// non-digit, which is left at *pos: what ParseU64 accepts, read in one pass.
inline QuickOutcome ReadNumber(std::string_view input, std::size_t* pos, std::uint64_t* value) {
  const char* const begin = input.data() + *pos;
  const char* const end = input.data() + input.size();
  const char* at = begin;
  std::uint64_t number = 0;
  unsigned digit = 0;
  // Digits are summed without a check; a number long enough to overflow is
  // read again, strictly, below.
  while (at != end && (digit = static_cast<unsigned char>(*at) - unsigned{'0'}) <= 9) {
    number = number * 10 + digit;
    ++at;
  }
  const std::size_t digits = static_cast<std::size_t>(at - begin);
  // 19 digits always fit in 64 bits; 20 may not, 21 never do.
  if (digits >= reply_line_detail::kMaxDigits &&
      (digits > reply_line_detail::kMaxDigits ||
       !ParseU64(std::string_view(begin, digits), &number))) {
    return QuickOutcome::kUnusual;
  }
  if (at == end) return QuickOutcome::kNeedMore;
  if (digits == 0) return QuickOutcome::kUnusual;
  *value = number;
  *pos += digits;
  return QuickOutcome::kDone;
}

// ERROR, CLIENT_ERROR <msg>, SERVER_ERROR <msg>: true and fills `reply` if
// `line` is one of them.
bool ParseErrorLine(std::string_view line, Reply* reply);

// Reads a data block of `size` bytes plus "\r\n" that starts at `input[offset]`:
// kNeedMore, kReply with consumed (and `*data`), or kError.
ParseResult ReadDataBlock(std::string_view input, std::size_t offset, std::uint64_t size,
                          const ParserLimits& limits, std::string_view* data);

// A complete reply of `consumed` bytes.
inline ParseResult Complete(std::size_t consumed) {
  return {ParseOutcome::kReply, consumed, Status()};
}

// A protocol_error result quoting (a printable prefix of) the offending bytes.
ParseResult Garbage(std::string_view what, std::string_view bytes);

}  // namespace cachet::memcached
