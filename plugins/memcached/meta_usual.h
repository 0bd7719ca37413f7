// The meta reader's usual replies (MetaBatch's internals, called from it alone):
// the replies memcached sends to the commands cachet writes, spelled as it
// spells them: a code, VA's size, the return flags f, c, k in that order (each
// only if asked for), the O token, "\r\n", and VA's data block. MN alone.
//
// Because the shape is known, the line is read in one pass, number by number,
// instead of being found, split into tokens and looked up. A reply is taken
// only when it is whole and parsed exactly as the general parser
// (MetaReplyParser::Parse) would parse it, into the same Reply; MetaBatch then
// routes it as any other (its O token, its key, the replies the command may get).
// Anything else (an error line, other flags or another order, garbage, a line
// or value over the limits, a reply still arriving) is left to the general
// parser, from the same bytes. The fuzzer (tests/fuzz/fuzz_memcached_meta_reader.cpp)
// checks both ways agree. No I/O, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reply.h"
#include "reply_line.h"

namespace cachet::memcached {

namespace meta_usual_detail {

// Whether `input` holds " <letter>" at *pos; moves *pos past it.
inline bool FlagAt(std::string_view input, std::size_t* pos, char letter) {
  if (input.size() - *pos < 2 || input[*pos] != ' ' || input[*pos + 1] != letter) return false;
  *pos += 2;
  return true;
}

// A decimal from *pos as ParseU64 reads a token, ended by a byte that is not a
// digit (not by the end of the input).
inline bool Number(std::string_view input, std::size_t* pos, std::uint64_t* value) {
  return ReadNumber(input, pos, value) == QuickOutcome::kDone;
}

inline bool Number32(std::string_view input, std::size_t* pos, std::uint32_t* value) {
  std::uint64_t wide = 0;
  if (!Number(input, pos, &wide) || wide > UINT32_MAX) return false;
  *value = static_cast<std::uint32_t>(wide);
  return true;
}

// The key token of k from *pos: at least one byte, up to a space. Given the
// `expected` key, only that key and its space: a key that passed key_check
// holds no space or control byte, so they are the whole token, compared at
// once. Otherwise a control byte ends the token too, so that the line taken
// ends where the general parser's does.
inline bool KeyToken(std::string_view input, std::size_t* pos, std::string_view expected,
                     std::string_view* key) {
  const std::size_t begin = *pos;
  std::size_t at = begin;
  if (!expected.empty()) {
    at += expected.size();
    if (input.size() <= at ||
        !reply_line_detail::SameBytes(input.data() + begin, expected.data(), expected.size())) {
      return false;
    }
  } else {
    while (at < input.size() && static_cast<unsigned char>(input[at]) > ' ') ++at;
    if (at == begin || at == input.size()) return false;
  }
  if (input[at] != ' ') return false;
  *key = input.substr(begin, at - begin);
  *pos = at;
  return true;
}

// The code at the front of `input`, with its space or "\r\n" still to read.
inline bool Code(std::string_view input, ReplyKind* kind) {
  if (input.size() < 4) return false;
  const char a = input[0];
  const char b = input[1];
  if (a == 'V' && b == 'A') {
    *kind = ReplyKind::kMetaValue;
  } else if (a == 'H' && b == 'D') {
    *kind = ReplyKind::kMetaHeader;
  } else if (a == 'E' && b == 'N') {
    *kind = ReplyKind::kMetaMiss;
  } else if (a == 'N' && b == 'F') {
    *kind = ReplyKind::kNotFound;
  } else if (a == 'N' && b == 'S') {
    *kind = ReplyKind::kNotStored;
  } else if (a == 'E' && b == 'X') {
    *kind = ReplyKind::kExists;
  } else if (a == 'M' && b == 'N') {
    *kind = ReplyKind::kMetaNoop;
  } else {
    return false;
  }
  return true;
}

}  // namespace meta_usual_detail

// One whole usual reply at the front of `input`, parsed into `*reply` as
// MetaReplyParser::Parse would parse it: the bytes it spans, its data block
// included; 0 for anything else (*reply then holds nothing of use). Whatever
// follows is not looked at. A reply that names a key (k) is taken only when it
// names `key`, unless `key` is empty. REQUIRES: *reply is a default Reply;
// `key` holds no space or control byte (it passed key_check as a text key).
inline std::size_t UsualMetaReply(std::string_view input, const ParserLimits& limits,
                                  std::string_view key, Reply* reply) {
  using namespace meta_usual_detail;
  if (!Code(input, &reply->kind)) return 0;
  if (reply->kind == ReplyKind::kMetaNoop) {
    // Its line, "MN", is still held to max_line, as the general parser holds it.
    return limits.max_line >= 2 && StartsWith(input, "MN\r\n") ? 4 : 0;
  }
  std::size_t pos = 2;
  std::uint64_t size = 0;
  if (reply->kind == ReplyKind::kMetaValue) {
    if (input[pos] != ' ') return 0;
    ++pos;
    if (!Number(input, &pos, &size)) return 0;
  }
  // The flags cachet asks for, in the order memcached returns them.
  if (FlagAt(input, &pos, 'f') && !Number32(input, &pos, &reply->flags)) return 0;
  if (FlagAt(input, &pos, 'c') && !Number(input, &pos, &reply->cas)) return 0;
  if (FlagAt(input, &pos, 'k') && !KeyToken(input, &pos, key, &reply->key)) return 0;
  if (!FlagAt(input, &pos, 'O') || !Number32(input, &pos, &reply->opaque)) return 0;
  reply->has_opaque = true;
  if (ExpectLiteral(input, &pos, "\r\n") != QuickOutcome::kDone) return 0;
  // A line the general parser would refuse is its to report.
  if (pos - 2 > limits.max_line) return 0;
  if (reply->kind != ReplyKind::kMetaValue) return pos;
  // So is a value over max_value, or a data block not ended by "\r\n".
  if (size > limits.max_value || input.size() - pos < size + 2) return 0;
  const std::size_t end = pos + static_cast<std::size_t>(size);
  if (input[end] != '\r' || input[end + 1] != '\n') return 0;
  reply->size = size;
  reply->data = input.substr(pos, static_cast<std::size_t>(size));
  return end + 2;
}

}  // namespace cachet::memcached
