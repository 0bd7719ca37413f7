// Text protocol requests, appended to a RequestBuffer. No I/O, no checks: keys
// and values must have passed key_check.h and the size limit first.
#pragma once

#include <cstdint>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/request_buffer.h"

namespace cachet::memcached {

using net::RequestBuffer;

// "gets" (or "gats <exptime>" when touching) then keys, then EndTextLine().
void BeginTextRetrieval(RequestBuffer& out, bool touch, std::int64_t exptime);
void AppendTextKey(RequestBuffer& out, std::string_view key);
void EndTextLine(RequestBuffer& out);

// set/add/replace/append/prepend/cas <key> <flags> <exptime> <bytes> [<cas>] [noreply]
void AppendTextStore(RequestBuffer& out, StoreMode mode, std::string_view key, ItemView item,
                     std::int64_t exptime, bool noreply);
void AppendTextDelete(RequestBuffer& out, std::string_view key, bool noreply);
void AppendTextArithmetic(RequestBuffer& out, bool decrement, std::string_view key,
                          std::uint64_t delta, bool noreply);
void AppendTextTouch(RequestBuffer& out, std::string_view key, std::int64_t exptime, bool noreply);
// A command without arguments: "flush_all", "stats", "version".
void AppendTextCommand(RequestBuffer& out, std::string_view command);

// Shared with the meta encoder: a signed decimal.
void AppendSigned(RequestBuffer& out, std::int64_t value);

}  // namespace cachet::memcached
