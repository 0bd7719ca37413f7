// Decimal text through std::to_chars and std::from_chars: locale-free, exact,
// and with explicit range errors.
#include "decimal_text.h"

#include <charconv>
#include <system_error>

namespace cachet {

namespace {

// Counters that memcached shrank in place keep their old length, padded with spaces.
std::string_view WithoutPadding(std::string_view text) {
  const std::size_t end = text.find_last_not_of(' ');
  return end == std::string_view::npos ? std::string_view() : text.substr(0, end + 1);
}

// Quotes at most a short prefix of `text`, so an error never carries a whole value.
std::string Quoted(std::string_view text) {
  constexpr std::size_t kShown = 24;
  std::string out = "'";
  out += text.substr(0, kShown);
  out += text.size() > kShown ? "...'" : "'";
  return out;
}

template <class T>
Status ParseNumber(std::string_view text, std::string_view what, T* out) {
  const std::string_view digits = WithoutPadding(text);
  if (digits.empty()) return Status::InvalidArgument("an empty value is not " + std::string(what));
  T value{};
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return Status::InvalidArgument(Quoted(digits) + " is out of range for " + std::string(what));
  }
  if (ec != std::errc() || ptr != end) {
    return Status::InvalidArgument(Quoted(digits) + " is not " + std::string(what));
  }
  *out = value;
  return Status::OK();
}

template <class T>
void FormatNumber(T v, std::string* out) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  out->assign(buffer, result.ptr);
}

}  // namespace

void FormatInteger(std::int64_t v, std::string* out) { FormatNumber(v, out); }
void FormatInteger(std::uint64_t v, std::string* out) { FormatNumber(v, out); }
void FormatDouble(double v, std::string* out) { FormatNumber(v, out); }

Status ParseInteger(std::string_view text, std::int64_t* out) {
  return ParseNumber(text, "a signed 64-bit integer", out);
}

Status ParseInteger(std::string_view text, std::uint64_t* out) {
  if (!text.empty() && text.front() == '-') {
    return Status::InvalidArgument(Quoted(text) +
                                   " is negative: out of range for an unsigned 64-bit integer");
  }
  return ParseNumber(text, "an unsigned 64-bit integer", out);
}

Status ParseDouble(std::string_view text, double* out) {
  return ParseNumber(text, "a decimal number", out);
}

Status ParseBool(std::string_view text, bool* out) {
  const std::string_view word = WithoutPadding(text);
  if (word == "1" || word == "true") {
    *out = true;
  } else if (word == "0" || word == "false") {
    *out = false;
  } else {
    return Status::InvalidArgument(Quoted(word) + " is not a bool (1, 0, true or false)");
  }
  return Status::OK();
}

}  // namespace cachet
