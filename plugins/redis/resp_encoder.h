// RESP command encoding: every command is an array of bulk strings.
//
// Commands are appended to a caller-owned buffer, so one buffer is reused for a
// whole pipeline and for every request of a connection: no allocation once it has
// grown. RespCommand writes the array header first, so the caller states the
// number of arguments up front; Arg() writes each one with its length, which is
// why any bytes (CRLF, NUL) are safe in keys and values.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace cachet::redis {

class RespCommand {
 public:
  // Appends "*<argument_count>\r\n" to `*out`, which must outlive this object.
  RespCommand(std::string* out, std::size_t argument_count);

  RespCommand& Arg(std::string_view bytes);
  // Decimal text, as Redis expects for numbers.
  RespCommand& Arg(std::int64_t number);
  RespCommand& Arg(std::uint64_t number);

  // Arguments written so far; equal to argument_count when the command is whole.
  std::size_t written() const noexcept { return written_; }

 private:
  template <class Number>
  RespCommand& AppendNumber(Number number);

  std::string* out_;
  std::size_t written_ = 0;
};

// Writing a command straight into a buffer sized for it up front, as a command
// of many arguments (MGET) does to allocate its request once: "*<count>\r\n",
// then per argument "$<n>\r\n", the n bytes, "\r\n". Inline: they run once
// per key.
namespace resp_detail {

inline std::size_t DecimalLength(std::uint64_t n) {
  if (n < 10) return 1;
  if (n < 100) return 2;
  std::size_t digits = 3;
  for (n /= 1000; n != 0; n /= 10) ++digits;
  return digits;
}

// "<kind><n>\r\n" at `at`; returns its end.
inline char* WriteLengthLine(char* at, char kind, std::uint64_t n) {
  *at++ = kind;
  if (n < 10) {
    *at++ = static_cast<char>('0' + n);
  } else if (n < 100) {
    *at++ = static_cast<char>('0' + n / 10);
    *at++ = static_cast<char>('0' + n % 10);
  } else {
    at = std::to_chars(at, at + 20, n).ptr;  // 20 digits hold any 64-bit number
  }
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

// memcpy, with the short copies of keys done in place: two overlapping moves
// instead of a call into the C library.
inline void CopyBytes(char* to, const char* from, std::size_t n) {
  if (n >= 8 && n <= 16) {
    std::uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + n - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + n - 8, &tail, 8);
  } else if (n >= 4 && n < 8) {
    std::uint32_t head, tail;
    std::memcpy(&head, from, 4);
    std::memcpy(&tail, from + n - 4, 4);
    std::memcpy(to, &head, 4);
    std::memcpy(to + n - 4, &tail, 4);
  } else if (n != 0) {
    std::memcpy(to, from, n);
  }
}

}  // namespace resp_detail

// The bytes of the header of an array of `count` elements.
inline std::size_t ArrayHeaderSize(std::size_t count) {
  return resp_detail::DecimalLength(count) + 3;
}

// The bytes one bulk-string argument of `length` bytes takes.
inline std::size_t BulkArgSize(std::size_t length) {
  return length + resp_detail::DecimalLength(length) + 5;
}

// Writes an array header at `at` and returns its end.
// REQUIRES: `at` has room for ArrayHeaderSize(count) bytes.
inline char* WriteArrayHeader(char* at, std::size_t count) {
  return resp_detail::WriteLengthLine(at, '*', count);
}

// Writes one bulk-string argument at `at` and returns its end.
// REQUIRES: `at` has room for BulkArgSize(bytes.size()) bytes.
inline char* WriteBulkArg(char* at, std::string_view bytes) {
  at = resp_detail::WriteLengthLine(at, '$', bytes.size());
  resp_detail::CopyBytes(at, bytes.data(), bytes.size());
  at += bytes.size();
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

// Appends one whole command.
void AppendCommand(std::string* out, std::initializer_list<std::string_view> args);
void AppendCommand(std::string* out, std::span<const std::string_view> args);
void AppendCommand(std::string* out, std::span<const std::string> args);

}  // namespace cachet::redis
