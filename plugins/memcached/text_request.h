// Text protocol requests, appended to a RequestBuffer (a batch) or a CommandLine
// (a single operation): each encoder is a template over the two, instantiated
// for both in text_request.cpp. No I/O, no checks: keys and values must have
// passed key_check.h and the size limit first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/request_buffer.h"
#include "command_line.h"

namespace cachet::memcached {

using net::RequestBuffer;

// "gets" (or "gats <exptime>" when touching) then keys, then EndTextLine().
template <class Out>
void BeginTextRetrieval(Out& out, bool touch, std::int64_t exptime);
template <class Out>
void AppendTextKey(Out& out, std::string_view key);
template <class Out>
void EndTextLine(Out& out);
// AppendTextKey() for every key of `ops` at once: they are gathered in
// `scratch` (which keeps its capacity from call to call) and appended as one.
void AppendTextKeys(RequestBuffer& out, std::span<Operation* const> ops, std::string& scratch);

// set/add/replace/append/prepend/cas <key> <flags> <exptime> <bytes> [<cas>] [noreply]
template <class Out>
void AppendTextStore(Out& out, StoreMode mode, std::string_view key, ItemView item,
                     std::int64_t exptime, bool noreply);
template <class Out>
void AppendTextDelete(Out& out, std::string_view key, bool noreply);
template <class Out>
void AppendTextArithmetic(Out& out, bool decrement, std::string_view key, std::uint64_t delta,
                          bool noreply);
template <class Out>
void AppendTextTouch(Out& out, std::string_view key, std::int64_t exptime, bool noreply);
// A command without arguments: "flush_all", "stats", "version".
template <class Out>
void AppendTextCommand(Out& out, std::string_view command);

// Shared with the meta encoder: a signed decimal.
template <class Out>
void AppendSigned(Out& out, std::int64_t value);

}  // namespace cachet::memcached
