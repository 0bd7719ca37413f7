// RESP command encoding into a reusable buffer.
#include "resp_encoder.h"

#include <charconv>
#include <cstring>

namespace cachet::redis {

namespace {

// Arguments up to this size (command names, keys, numbers) are assembled with
// their header on the stack and appended in one call; each append to a string
// costs a capacity check and a copy call, so one instead of five matters.
constexpr std::size_t kSmallArgument = 96;

// "<kind><length>\r\n" at `at`; returns the end. `at` has room for 24 bytes.
char* WriteHeader(char* at, char kind, std::size_t length) {
  *at++ = kind;
  at = std::to_chars(at, at + 21, length).ptr;  // 21 bytes hold any 64-bit number
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

template <class Range>
void AppendAll(std::string* out, const Range& args) {
  RespCommand command(out, args.size());
  for (const auto& arg : args) command.Arg(std::string_view(arg));
}

}  // namespace

RespCommand::RespCommand(std::string* out, std::size_t argument_count) : out_(out) {
  char header[24];
  out_->append(header, static_cast<std::size_t>(WriteHeader(header, '*', argument_count) - header));
}

RespCommand& RespCommand::Arg(std::string_view bytes) {
  ++written_;
  char small[24 + kSmallArgument + 2];
  char* end = WriteHeader(small, '$', bytes.size());
  if (bytes.size() > kSmallArgument) {
    // A large value is appended straight from the caller's bytes.
    out_->append(small, static_cast<std::size_t>(end - small))
        .append(bytes.data(), bytes.size())
        .append("\r\n", 2);
    return *this;
  }
  if (!bytes.empty()) std::memcpy(end, bytes.data(), bytes.size());
  end += bytes.size();
  *end++ = '\r';
  *end++ = '\n';
  out_->append(small, static_cast<std::size_t>(end - small));
  return *this;
}

// A number's digits go straight after its header, in the same single append.
template <class Number>
RespCommand& RespCommand::AppendNumber(Number number) {
  ++written_;
  char digits[24];
  const std::size_t length =
      static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, number).ptr - digits);
  char whole[24 + sizeof digits + 2];
  char* end = WriteHeader(whole, '$', length);
  std::memcpy(end, digits, length);
  end += length;
  *end++ = '\r';
  *end++ = '\n';
  out_->append(whole, static_cast<std::size_t>(end - whole));
  return *this;
}

RespCommand& RespCommand::Arg(std::int64_t number) { return AppendNumber(number); }

RespCommand& RespCommand::Arg(std::uint64_t number) { return AppendNumber(number); }

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  AppendAll(out, args);
}
void AppendCommand(std::string* out, std::span<const std::string_view> args) {
  AppendAll(out, args);
}
void AppendCommand(std::string* out, std::span<const std::string> args) { AppendAll(out, args); }

}  // namespace cachet::redis
