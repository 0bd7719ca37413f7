// Text protocol requests, appended to a RequestBuffer (a batch) or a CommandLine
// (a single operation): each encoder is a template over the two, defined here so
// that a single command's line is built inline, with its literals' lengths known.
// No I/O, no checks: keys and values must have passed key_check.h and the size
// limit first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/request_buffer.h"
#include "command_line.h"
#include "exptime.h"

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

// The command of one operation other than a get (a batch gathers the keys of
// its gets into one line): the one switch from an operation to its command,
// for a batch and a single operation alike.
template <class Out>
void AppendTextUpdate(Out& out, const Operation& op);

// Shared with the meta encoder: a signed decimal.
template <class Out>
void AppendSigned(Out& out, std::int64_t value);

// Definitions.

namespace text_request_detail {

inline std::string_view StoreCommand(StoreMode mode) {
  switch (mode) {
    case StoreMode::kSet:
      return "set ";
    case StoreMode::kAdd:
      return "add ";
    case StoreMode::kReplace:
      return "replace ";
    case StoreMode::kAppend:
      return "append ";
    case StoreMode::kPrepend:
      return "prepend ";
    case StoreMode::kCas:
      return "cas ";
  }
  return "set ";
}

// Two appends of a literal each rather than one of either: a literal's length
// is a constant, so its copy is a store or two.
template <class Out>
inline void EndCommand(Out& out, bool noreply) {
  if (noreply) {
    out.Append(" noreply\r\n");
  } else {
    out.Append("\r\n");
  }
}

}  // namespace text_request_detail

template <class Out>
void AppendSigned(Out& out, std::int64_t value) {
  if (value < 0) {
    out.Append('-');
    out.AppendDecimal(static_cast<std::uint64_t>(-(value + 1)) + 1);
  } else {
    out.AppendDecimal(static_cast<std::uint64_t>(value));
  }
}

template <class Out>
void BeginTextRetrieval(Out& out, bool touch, std::int64_t exptime) {
  if (touch) {
    out.Append("gats ");
    AppendSigned(out, exptime);
  } else {
    out.Append("gets");
  }
}

template <class Out>
void AppendTextKey(Out& out, std::string_view key) {
  out.Append(' ');
  out.Append(key);
}

template <class Out>
void EndTextLine(Out& out) {
  out.Append("\r\n");
}

template <class Out>
void AppendTextStore(Out& out, StoreMode mode, std::string_view key, ItemView item,
                     std::int64_t exptime, bool noreply) {
  out.Append(text_request_detail::StoreCommand(mode));
  out.Append(key);
  out.Append(' ');
  out.AppendDecimal(item.flags);
  out.Append(' ');
  AppendSigned(out, exptime);
  out.Append(' ');
  out.AppendDecimal(item.value.size());
  if (mode == StoreMode::kCas) {
    out.Append(' ');
    out.AppendDecimal(item.cas);
  }
  text_request_detail::EndCommand(out, noreply);
  out.AppendValue(item.value);
  out.Append("\r\n");
}

template <class Out>
void AppendTextDelete(Out& out, std::string_view key, bool noreply) {
  out.Append("delete ");
  out.Append(key);
  text_request_detail::EndCommand(out, noreply);
}

template <class Out>
void AppendTextArithmetic(Out& out, bool decrement, std::string_view key, std::uint64_t delta,
                          bool noreply) {
  out.Append(decrement ? "decr " : "incr ");
  out.Append(key);
  out.Append(' ');
  out.AppendDecimal(delta);
  text_request_detail::EndCommand(out, noreply);
}

template <class Out>
void AppendTextTouch(Out& out, std::string_view key, std::int64_t exptime, bool noreply) {
  out.Append("touch ");
  out.Append(key);
  out.Append(' ');
  AppendSigned(out, exptime);
  text_request_detail::EndCommand(out, noreply);
}

template <class Out>
void AppendTextCommand(Out& out, std::string_view command) {
  out.Append(command);
  out.Append("\r\n");
}

// The command line of an update (store, delete, incr/decr, touch).
template <class Out>
inline void AppendTextUpdate(Out& out, const Operation& op) {
  // An exptime is worked out only for the commands that send one.
  switch (op.kind) {
    case OpKind::kStore:
      AppendTextStore(out, op.mode, op.key, op.item, ExptimeFor(op.ttl), op.noreply);
      break;
    case OpKind::kRemove:
      AppendTextDelete(out, op.key, op.noreply);
      break;
    case OpKind::kIncr:
    case OpKind::kDecr:
      AppendTextArithmetic(out, op.kind == OpKind::kDecr, op.key, op.delta, op.noreply);
      break;
    case OpKind::kTouch:
      AppendTextTouch(out, op.key, ExptimeFor(op.ttl), op.noreply);
      break;
    case OpKind::kGet:
      break;
  }
}

}  // namespace cachet::memcached
