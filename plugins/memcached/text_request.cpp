// Text protocol request encoding.
#include "text_request.h"

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

void EndCommand(RequestBuffer& out, bool noreply) {
  out.Append(noreply ? std::string_view(" noreply\r\n") : std::string_view("\r\n"));
}

}  // namespace

void AppendSigned(RequestBuffer& out, std::int64_t value) {
  if (value < 0) {
    out.Append('-');
    out.AppendDecimal(static_cast<std::uint64_t>(-(value + 1)) + 1);
  } else {
    out.AppendDecimal(static_cast<std::uint64_t>(value));
  }
}

void BeginTextRetrieval(RequestBuffer& out, bool touch, std::int64_t exptime) {
  if (touch) {
    out.Append("gats ");
    AppendSigned(out, exptime);
  } else {
    out.Append("gets");
  }
}

void AppendTextKey(RequestBuffer& out, std::string_view key) {
  out.Append(' ');
  out.Append(key);
}

void EndTextLine(RequestBuffer& out) { out.Append("\r\n"); }

void AppendTextStore(RequestBuffer& out, StoreMode mode, std::string_view key, ItemView item,
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

void AppendTextDelete(RequestBuffer& out, std::string_view key, bool noreply) {
  out.Append("delete ");
  out.Append(key);
  EndCommand(out, noreply);
}

void AppendTextArithmetic(RequestBuffer& out, bool decrement, std::string_view key,
                          std::uint64_t delta, bool noreply) {
  out.Append(decrement ? "decr " : "incr ");
  out.Append(key);
  out.Append(' ');
  out.AppendDecimal(delta);
  EndCommand(out, noreply);
}

void AppendTextTouch(RequestBuffer& out, std::string_view key, std::int64_t exptime, bool noreply) {
  out.Append("touch ");
  out.Append(key);
  out.Append(' ');
  AppendSigned(out, exptime);
  EndCommand(out, noreply);
}

void AppendTextCommand(RequestBuffer& out, std::string_view command) {
  out.Append(command);
  out.Append("\r\n");
}

}  // namespace cachet::memcached
