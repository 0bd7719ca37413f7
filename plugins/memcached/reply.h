// Reply: one parsed memcached reply, text or meta.
//
// Both parsers produce this one shape, so the backend and the status table need
// not care which protocol spoke. String views point into the connection's read
// buffer: they are valid until the parser's caller consumes the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cachet/status.h"

namespace cachet::memcached {

enum class ReplyKind : std::uint8_t {
  // Text protocol.
  kValue,      // VALUE <key> <flags> <bytes> [<cas>] + data (one hit of get/gets/gat)
  kEnd,        // END: the end of a retrieval or of stats
  kStored,     // STORED
  kNotStored,  // NOT_STORED
  kExists,     // EXISTS
  kNotFound,   // NOT_FOUND
  kDeleted,    // DELETED
  kTouched,    // TOUCHED
  kOk,         // OK (flush_all)
  kNumber,     // the new value after incr/decr
  kVersion,    // VERSION <text>
  kStat,       // STAT <name> <value>
  // Meta protocol.
  kMetaValue,   // VA <size> <flags>* + data
  kMetaHeader,  // HD <flags>*: success without data
  kMetaMiss,    // EN: a miss
  kMetaNoop,    // MN: the end of a quiet batch
  // Errors, in both protocols.
  kError,        // ERROR: the server did not know the command
  kClientError,  // CLIENT_ERROR <message>
  kServerError,  // SERVER_ERROR <message>
};

// The word a reply of `kind` begins with, for messages ("a number" for kNumber).
constexpr std::string_view ReplyWord(ReplyKind kind) {
  switch (kind) {
    case ReplyKind::kValue: return "VALUE";
    case ReplyKind::kEnd: return "END";
    case ReplyKind::kStored: return "STORED";
    case ReplyKind::kNotStored: return "NOT_STORED";
    case ReplyKind::kExists: return "EXISTS";
    case ReplyKind::kNotFound: return "NOT_FOUND";
    case ReplyKind::kDeleted: return "DELETED";
    case ReplyKind::kTouched: return "TOUCHED";
    case ReplyKind::kOk: return "OK";
    case ReplyKind::kNumber: return "a number";
    case ReplyKind::kVersion: return "VERSION";
    case ReplyKind::kStat: return "STAT";
    case ReplyKind::kMetaValue: return "VA";
    case ReplyKind::kMetaHeader: return "HD";
    case ReplyKind::kMetaMiss: return "EN";
    case ReplyKind::kMetaNoop: return "MN";
    case ReplyKind::kError: return "ERROR";
    case ReplyKind::kClientError: return "CLIENT_ERROR";
    case ReplyKind::kServerError: return "SERVER_ERROR";
  }
  return "an unknown reply";
}

struct Reply {
  ReplyKind kind = ReplyKind::kEnd;
  std::string_view key;   // kValue; meta with k
  bool key_base64 = false;  // meta b: the key came back base64-encoded (stored binary)
  std::string_view data;  // kValue, kMetaValue: the value bytes
  // kMetaValue: the size VA announced (a large value's data may not be read yet).
  std::uint64_t size = 0;
  std::string_view text;  // kVersion; kStat name; error messages
  std::string_view stat_value;
  std::uint32_t flags = 0;   // kValue; meta with f
  std::uint64_t cas = 0;     // gets; meta with c
  std::uint64_t number = 0;  // kNumber
  std::uint32_t opaque = 0;  // meta with O
  bool has_opaque = false;
  bool win = false;        // meta W: this client won the right to load the key
  bool win_taken = false;  // meta Z: another client already won it
  bool stale = false;      // meta X: the item was marked stale
};

// The empty item `mg ... N` creates on a miss while its winner loads the value
// (W or Z, no bytes, no flags): a miss to every reader. Judged by the announced
// size: a large value routed by its header alone has no data yet.
inline bool IsLeasePlaceholder(const Reply& reply) {
  return reply.kind == ReplyKind::kMetaValue && reply.size == 0 && reply.flags == 0 &&
         (reply.win || reply.win_taken);
}

// What a parser made of the bytes at the front of its input.
enum class ParseOutcome : std::uint8_t {
  kNeedMore,  // no complete reply yet; nothing consumed
  kReply,     // one reply; `consumed` bytes belong to it
  kError,     // bytes that are no reply: the connection must be dropped
};

struct ParseResult {
  ParseOutcome outcome = ParseOutcome::kNeedMore;
  std::size_t consumed = 0;
  Status error;  // kProtocolError (or kTooLarge) when outcome is kError
};

struct ParserLimits {
  std::size_t max_line = 2048;          // a reply line without its data block
  std::size_t max_value = 1024 * 1024;  // a data block (max_item_size)
};

}  // namespace cachet::memcached
