// RESP command encoding into a reusable buffer.
#include "resp_encoder.h"

#include <charconv>

namespace cachet::redis {

namespace {

// Arguments up to this size (names, keys, numbers) are assembled with their header on the stack.
constexpr std::size_t kSmallArgument = 96;

template <class Range>
void AppendAll(std::string* out, const Range& args) {
  RespCommand command(out, args.size());
  for (const auto& arg : args) command.Arg(std::string_view(arg));
}

}  // namespace

RespCommand::RespCommand(std::string* out, std::size_t argument_count) : out_(out) {
  char header[24];
  out_->append(header, static_cast<std::size_t>(WriteArrayHeader(header, argument_count) - header));
}

RespCommand& RespCommand::Arg(std::string_view bytes) {
  ++written_;
  char small[24 + kSmallArgument + 2];
  if (bytes.size() > kSmallArgument) {
    // A large value is appended straight from the caller's bytes.
    char* end = resp_detail::WriteLengthLine(small, '$', bytes.size());
    out_->append(small, static_cast<std::size_t>(end - small))
        .append(bytes.data(), bytes.size())
        .append("\r\n", 2);
    return *this;
  }
  out_->append(small, static_cast<std::size_t>(WriteBulkArg(small, bytes) - small));
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
  char* end = WriteBulkArg(whole, std::string_view(digits, length));
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
