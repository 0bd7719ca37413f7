// TextReplyParser: one reply line (and a VALUE's data block) at a time.
#include "text_parser.h"

#include "reply_line.h"

namespace cachet::memcached {

namespace {

bool ParseStatOrVersion(std::string_view line, Reply* reply) {
  std::string_view rest = line;
  std::string_view word = NextToken(&rest);
  if (word == "VERSION" && !rest.empty()) {
    reply->kind = ReplyKind::kVersion;
    reply->text = rest;
    return true;
  }
  if (word == "STAT") {
    std::string_view name = NextToken(&rest);
    if (name.empty()) return false;
    reply->kind = ReplyKind::kStat;
    reply->text = name;
    reply->stat_value = rest;
    return true;
  }
  return false;
}

}  // namespace

ParseResult TextReplyParser::Parse(std::string_view input, Reply* reply) const {
  std::string_view line;
  ParseResult found = FindLine(input, limits_.max_line, &line);
  if (found.outcome == ParseOutcome::kNeedMore) {
    return PartialLine(input, {"VALUE", "END", "STORED", "NOT_STORED", "EXISTS", "NOT_FOUND",
                               "DELETED", "TOUCHED", "OK", "ERROR", "CLIENT_ERROR",
                               "SERVER_ERROR", "VERSION", "STAT"},
                       true);
  }
  if (found.outcome != ParseOutcome::kReply) return found;
  *reply = Reply{};
  if (line.starts_with("VALUE ")) return ParseValue(input, line.substr(6), found.consumed, reply);
  // incr/decr answer a bare number; a digit can start no other reply line.
  const bool digit = !line.empty() && line[0] >= '0' && line[0] <= '9';
  if (digit && ParseU64(line, &reply->number)) {
    reply->kind = ReplyKind::kNumber;
    return Complete(found.consumed);
  }
  if (FixedTextReply(line, &reply->kind) || ParseErrorLine(line, reply) ||
      ParseStatOrVersion(line, reply)) {
    return Complete(found.consumed);
  }
  return Garbage("unexpected reply", line);
}

namespace {

// "<key> <flags> <bytes> [<cas>]", the arguments of a VALUE line.
bool ParseValueArgs(std::string_view args, Reply* reply, std::uint64_t* size) {
  std::string_view rest = args;
  reply->kind = ReplyKind::kValue;
  reply->key = NextToken(&rest);
  bool ok = !reply->key.empty() && ParseU32(NextToken(&rest), &reply->flags) &&
            ParseU64(NextToken(&rest), size);
  if (ok && !rest.empty()) ok = ParseU64(NextToken(&rest), &reply->cas) && rest.empty();
  return ok;
}

}  // namespace

ParseResult TextReplyParser::ParseValue(std::string_view input, std::string_view args,
                                        std::size_t line_end, Reply* reply) const {
  std::uint64_t size = 0;
  if (!ParseValueArgs(args, reply, &size)) return Garbage("malformed VALUE line", args);
  return ReadDataBlock(input, line_end, size, limits_, &reply->data);
}

bool TextReplyParser::ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                                  std::uint64_t* size) const {
  std::string_view line;
  if (FindLine(input, limits_.max_line, &line).outcome != ParseOutcome::kReply) return false;
  if (!line.starts_with("VALUE ")) return false;
  *reply = Reply{};
  if (!ParseValueArgs(line.substr(6), reply, size) || *size > limits_.max_value) return false;
  *data_offset = line.size() + 2;
  return true;
}

}  // namespace cachet::memcached
