// Quick replies: the usual answer to one single text-protocol command, read in
// one pass over the bytes.
//
// A lone get is answered by "END" or by "VALUE <key> <flags> <bytes> [<cas>]",
// its data and "END"; a lone set by "STORED" (or NOT_STORED, EXISTS, NOT_FOUND),
// and so on. These recognizers know which command was sent and which key was
// asked for, so they compare instead of scanning and tokenizing: the key is
// matched with one memcmp, numbers are read where they must be.
//
// Everything else is kUnusual: an error line, a key that was not asked for,
// garbage, a value over the limit, bytes after the reply, a whole value whose
// END has not arrived yet. The caller then hands
// the same (unconsumed) bytes to the general reader a batch uses (TextBatch), so
// every error, message and decision stays that reader's; these functions only
// ever say kNeedMore where it would also wait for more. No I/O, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cachet/backend.h"
#include "reply.h"

namespace cachet::memcached {

enum class QuickOutcome : std::uint8_t {
  kNeedMore,  // a prefix of a usual reply: read more
  kDone,      // the whole input is exactly one usual reply
  kUnusual,   // anything else: let the general reader judge it
};

struct QuickReply {
  QuickOutcome outcome = QuickOutcome::kUnusual;
  StatusCode code = StatusCode::kOk;  // kDone: the operation's outcome
  std::uint64_t number = 0;           // kDone after incr/decr: the new value
  std::string_view data;              // kDone after a hit: the value bytes
  std::uint32_t flags = 0;            // kDone after a hit
  std::uint64_t cas = 0;              // kDone after a hit (gets, gats)
};

// The reply to "gets <key>" or "gats <exptime> <key>".
QuickReply QuickTextRetrieval(std::string_view input, std::string_view key,
                              const ParserLimits& limits);

// Inline, in quick_value.h: QuickTextValue(), one hit of a gets reply, and
// QuickTextLine(), the one-line reply to a store, delete, incr/decr or touch.

}  // namespace cachet::memcached
