// RESP command encoding into a reusable buffer.
#include "resp_encoder.h"

#include <charconv>

namespace cachet::redis {

namespace {

template <class Number>
void AppendDecimal(std::string* out, Number number) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, number);
  (void)ec;  // 24 bytes hold any 64-bit number
  out->append(digits, end);
}

void AppendHeader(std::string* out, char kind, std::size_t length) {
  out->push_back(kind);
  AppendDecimal(out, length);
  out->append("\r\n", 2);
}

template <class Range>
void AppendAll(std::string* out, const Range& args) {
  RespCommand command(out, args.size());
  for (const auto& arg : args) command.Arg(std::string_view(arg));
}

}  // namespace

RespCommand::RespCommand(std::string* out, std::size_t argument_count) : out_(out) {
  AppendHeader(out_, '*', argument_count);
}

RespCommand& RespCommand::Arg(std::string_view bytes) {
  AppendHeader(out_, '$', bytes.size());
  out_->append(bytes.data(), bytes.size());
  out_->append("\r\n", 2);
  ++written_;
  return *this;
}

RespCommand& RespCommand::Arg(std::int64_t number) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, number);
  (void)ec;
  return Arg(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

RespCommand& RespCommand::Arg(std::uint64_t number) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, number);
  (void)ec;
  return Arg(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  AppendAll(out, args);
}
void AppendCommand(std::string* out, std::span<const std::string_view> args) {
  AppendAll(out, args);
}
void AppendCommand(std::string* out, std::span<const std::string> args) { AppendAll(out, args); }

}  // namespace cachet::redis
