// MetaReplyParser: a two-letter code, return flags, and VA's data block.
#include "meta_parser.h"

#include "reply_line.h"

namespace cachet::memcached {

namespace {

struct MetaCode {
  std::string_view code;
  ReplyKind kind;
};

constexpr MetaCode kCodes[] = {
    {"VA", ReplyKind::kMetaValue}, {"HD", ReplyKind::kMetaHeader}, {"EN", ReplyKind::kMetaMiss},
    {"NS", ReplyKind::kNotStored}, {"EX", ReplyKind::kExists},     {"NF", ReplyKind::kNotFound},
    {"MN", ReplyKind::kMetaNoop},
};

bool LookupCode(std::string_view code, ReplyKind* kind) {
  for (const MetaCode& c : kCodes) {
    if (c.code == code) {
      *kind = c.kind;
      return true;
    }
  }
  return false;
}

// One return flag: a letter and its token.
bool ParseFlag(std::string_view flag, Reply* reply) {
  if (flag.empty()) return false;
  std::string_view token = flag.substr(1);
  switch (flag[0]) {
    case 'f':
      return ParseU32(token, &reply->flags);
    case 'c':
      return ParseU64(token, &reply->cas);
    case 'O':
      reply->has_opaque = true;
      return ParseU32(token, &reply->opaque);
    case 'k':
      reply->key = token;
      return !token.empty();
    case 'b':
      reply->key_base64 = true;
      return token.empty();
    case 'W':
      reply->win = true;
      return token.empty();
    case 'Z':
      reply->win_taken = true;
      return token.empty();
    case 'X':
      reply->stale = true;
      return token.empty();
    default:
      // t, s, h, l...: information cachet does not use.
      return true;
  }
}

bool ParseFlags(std::string_view rest, Reply* reply) {
  while (!rest.empty()) {
    if (!ParseFlag(NextToken(&rest), reply)) return false;
  }
  return true;
}

}  // namespace

ParseResult MetaReplyParser::Parse(std::string_view input, Reply* reply) const {
  std::string_view line;
  ParseResult found = FindLine(input, limits_.max_line, &line);
  if (found.outcome == ParseOutcome::kNeedMore) {
    return PartialLine(input, {"VA", "HD", "EN", "NS", "EX", "NF", "MN", "ERROR", "CLIENT_ERROR",
                               "SERVER_ERROR"},
                       false);
  }
  if (found.outcome != ParseOutcome::kReply) return found;
  *reply = Reply{};
  if (ParseErrorLine(line, reply)) return Complete(found.consumed);
  std::string_view rest = line;
  std::string_view code = NextToken(&rest);
  if (!LookupCode(code, &reply->kind)) return Garbage("unexpected meta reply", line);
  std::uint64_t size = 0;
  if (reply->kind == ReplyKind::kMetaValue && !ParseU64(NextToken(&rest), &size)) {
    return Garbage("malformed VA line", line);
  }
  if (!ParseFlags(rest, reply)) return Garbage("malformed meta flags", line);
  if (reply->kind != ReplyKind::kMetaValue) return Complete(found.consumed);
  reply->size = size;
  return ReadDataBlock(input, found.consumed, size, limits_, &reply->data);
}

bool MetaReplyParser::ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                                  std::uint64_t* size) const {
  std::string_view line;
  if (FindLine(input, limits_.max_line, &line).outcome != ParseOutcome::kReply) return false;
  if (!line.starts_with("VA ")) return false;
  *reply = Reply{};
  reply->kind = ReplyKind::kMetaValue;
  std::string_view rest = line.substr(3);
  if (!ParseU64(NextToken(&rest), size) || !ParseFlags(rest, reply)) return false;
  if (*size > limits_.max_value) return false;
  reply->size = *size;
  *data_offset = line.size() + 2;
  return true;
}

}  // namespace cachet::memcached
