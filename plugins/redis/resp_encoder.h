// RESP command encoding: every command is an array of bulk strings.
//
// Commands are appended to a caller-owned buffer, so one buffer is reused for a
// whole pipeline and for every request of a connection: no allocation once it has
// grown. RespCommand writes the array header first, so the caller states the
// number of arguments up front; Arg() writes each one with its length, which is
// why any bytes (CRLF, NUL) are safe in keys and values.
#pragma once

#include <cstddef>
#include <cstdint>
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

// Appends one whole command.
void AppendCommand(std::string* out, std::initializer_list<std::string_view> args);
void AppendCommand(std::string* out, std::span<const std::string_view> args);
void AppendCommand(std::string* out, std::span<const std::string> args);

}  // namespace cachet::redis
