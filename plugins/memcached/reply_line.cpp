// Shared pieces of the memcached reply parsers.
#include "reply_line.h"

#include <charconv>

#include "printable.h"

namespace cachet::memcached {

ParseResult FindLine(std::string_view input, std::size_t max_line, std::string_view* line) {
  std::size_t newline = input.find('\n');
  if (newline == std::string_view::npos) {
    if (input.size() > max_line + 1) return Garbage("reply line too long", input);
    return {};
  }
  if (newline == 0 || input[newline - 1] != '\r') {
    return Garbage("reply line not ended by \\r\\n", input.substr(0, newline));
  }
  if (newline - 1 > max_line) return Garbage("reply line too long", input);
  *line = input.substr(0, newline - 1);
  return {ParseOutcome::kReply, newline + 1, Status::OK()};
}

std::string_view NextToken(std::string_view* rest) {
  std::size_t space = rest->find(' ');
  std::string_view token = rest->substr(0, space);
  *rest = space == std::string_view::npos ? std::string_view() : rest->substr(space + 1);
  return token;
}

bool ParseU64(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseU32(std::string_view text, std::uint32_t* out) {
  std::uint64_t wide = 0;
  if (!ParseU64(text, &wide) || wide > UINT32_MAX) return false;
  *out = static_cast<std::uint32_t>(wide);
  return true;
}

bool ParseErrorLine(std::string_view line, Reply* reply) {
  std::string_view rest = line;
  std::string_view code = NextToken(&rest);
  if (code == "ERROR") {
    reply->kind = ReplyKind::kError;
  } else if (code == "CLIENT_ERROR") {
    reply->kind = ReplyKind::kClientError;
  } else if (code == "SERVER_ERROR") {
    reply->kind = ReplyKind::kServerError;
  } else {
    return false;
  }
  reply->text = rest;
  return true;
}

void ReadDataBlock(std::string_view input, std::size_t offset, std::uint64_t size,
                   const ParserLimits& limits, std::string_view* data, ParseResult* result) {
  if (size > limits.max_value) {
    *result = {ParseOutcome::kError, 0,
               Status::TooLarge("memcached: a " + std::to_string(size) +
                                "-byte value is over max_item_size (" +
                                std::to_string(limits.max_value) + ")")};
    return;
  }
  const std::size_t end = offset + static_cast<std::size_t>(size);
  if (input.size() < end + 2) {
    *result = {};
    return;
  }
  if (input[end] != '\r' || input[end + 1] != '\n') {
    *result = Garbage("data block not ended by \\r\\n", input.substr(end, 16));
    return;
  }
  *data = input.substr(offset, static_cast<std::size_t>(size));
  *result = {ParseOutcome::kReply, end + 2, Status::OK()};
}

ParseResult Garbage(std::string_view what, std::string_view bytes) {
  return {
      ParseOutcome::kError, 0,
      Status::ProtocolError("memcached: " + std::string(what) + ": '" + Printable(bytes) + "'")};
}

}  // namespace cachet::memcached
