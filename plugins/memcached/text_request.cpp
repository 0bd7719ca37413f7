// Text protocol request encoding.
#include "text_request.h"

#include <cstring>

namespace cachet::memcached {

namespace {

std::string_view StoreCommand(StoreMode mode) {
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

template <class Out>
void EndCommand(Out& out, bool noreply) {
  out.Append(noreply ? std::string_view(" noreply\r\n") : std::string_view("\r\n"));
}

}  // namespace

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

void AppendTextKeys(RequestBuffer& out, std::span<Operation* const> ops, std::string& scratch) {
  std::size_t size = 0;
  for (const Operation* op : ops) size += 1 + op->key.size();
  scratch.resize(size);
  char* at = scratch.data();
  for (const Operation* op : ops) {
    *at++ = ' ';
    std::memcpy(at, op->key.data(), op->key.size());
    at += op->key.size();
  }
  out.Append(scratch);
}

template <class Out>
void EndTextLine(Out& out) {
  out.Append("\r\n");
}

template <class Out>
void AppendTextStore(Out& out, StoreMode mode, std::string_view key, ItemView item,
                     std::int64_t exptime, bool noreply) {
  out.Append(StoreCommand(mode));
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
  EndCommand(out, noreply);
  out.AppendValue(item.value);
  out.Append("\r\n");
}

template <class Out>
void AppendTextDelete(Out& out, std::string_view key, bool noreply) {
  out.Append("delete ");
  out.Append(key);
  EndCommand(out, noreply);
}

template <class Out>
void AppendTextArithmetic(Out& out, bool decrement, std::string_view key, std::uint64_t delta,
                          bool noreply) {
  out.Append(decrement ? "decr " : "incr ");
  out.Append(key);
  out.Append(' ');
  out.AppendDecimal(delta);
  EndCommand(out, noreply);
}

template <class Out>
void AppendTextTouch(Out& out, std::string_view key, std::int64_t exptime, bool noreply) {
  out.Append("touch ");
  out.Append(key);
  out.Append(' ');
  AppendSigned(out, exptime);
  EndCommand(out, noreply);
}

template <class Out>
void AppendTextCommand(Out& out, std::string_view command) {
  out.Append(command);
  out.Append("\r\n");
}

// The two request builders every encoder serves.
#define CACHET_TEXT_ENCODERS_FOR(Out)                                                             \
  template void BeginTextRetrieval(Out&, bool, std::int64_t);                                     \
  template void AppendTextKey(Out&, std::string_view);                                            \
  template void EndTextLine(Out&);                                                                \
  template void AppendTextStore(Out&, StoreMode, std::string_view, ItemView, std::int64_t, bool); \
  template void AppendTextDelete(Out&, std::string_view, bool);                                   \
  template void AppendTextArithmetic(Out&, bool, std::string_view, std::uint64_t, bool);          \
  template void AppendTextTouch(Out&, std::string_view, std::int64_t, bool);                      \
  template void AppendTextCommand(Out&, std::string_view);                                        \
  template void AppendSigned(Out&, std::int64_t);

CACHET_TEXT_ENCODERS_FOR(RequestBuffer)
CACHET_TEXT_ENCODERS_FOR(CommandLine)

#undef CACHET_TEXT_ENCODERS_FOR

}  // namespace cachet::memcached
