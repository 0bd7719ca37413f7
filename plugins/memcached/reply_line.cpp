// Shared pieces of the memcached reply parsers.
#include "reply_line.h"

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
  return Complete(newline + 1);
}

ParseResult PartialLine(std::string_view partial, std::initializer_list<std::string_view> words,
                        bool number) {
  if (!partial.empty() && partial.back() == '\r') partial.remove_suffix(1);
  const std::size_t space = partial.find(' ');
  const std::string_view word = partial.substr(0, space);
  const bool digits = word.find_first_not_of("0123456789") == std::string_view::npos;
  if (number && !word.empty() && digits && space == std::string_view::npos) return {};
  for (std::string_view w : words) {
    if (space == std::string_view::npos ? w.starts_with(word) : w == word) return {};
  }
  return Garbage("no reply starts with", partial.substr(0, 32));
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

ParseResult ReadDataBlock(std::string_view input, std::size_t offset, std::uint64_t size,
                          const ParserLimits& limits, std::string_view* data) {
  if (size > limits.max_value) {
    return {ParseOutcome::kError, 0,
            Status::TooLarge("memcached: a " + std::to_string(size) +
                             "-byte value is over max_item_size (" +
                             std::to_string(limits.max_value) + ")")};
  }
  const std::size_t end = offset + static_cast<std::size_t>(size);
  if (input.size() < end + 2) return {};
  if (input[end] != '\r' || input[end + 1] != '\n') {
    return Garbage("data block not ended by \\r\\n", input.substr(end, 16));
  }
  *data = input.substr(offset, static_cast<std::size_t>(size));
  return Complete(end + 2);
}

ParseResult Garbage(std::string_view what, std::string_view bytes) {
  return {
      ParseOutcome::kError, 0,
      Status::ProtocolError("memcached: " + std::string(what) + ": '" + Printable(bytes) + "'")};
}

}  // namespace cachet::memcached
