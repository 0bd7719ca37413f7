// Meta protocol request encoding.
#include "meta_request.h"

#include <string>

#include "exptime.h"
#include "text_request.h"

namespace cachet::memcached {

namespace {

template <class Out>
void AppendKey(Out& out, std::string_view command, std::string_view key, const MetaTokens& tokens) {
  out.Append(command);
  if (tokens.binary_key) {
    AppendBase64(out, key);
  } else {
    out.Append(key);
  }
}

// The flags every meta request ends with: b, O<opaque>, q.
template <class Out>
void EndRequest(Out& out, const MetaTokens& tokens) {
  if (tokens.binary_key) out.Append(" b");
  out.Append(" O");
  out.AppendDecimal(tokens.opaque);
  out.Append(tokens.quiet ? std::string_view(" q\r\n") : std::string_view("\r\n"));
}

std::string_view ModeFlag(StoreMode mode) {
  switch (mode) {
    case StoreMode::kAdd:
      return " ME";
    case StoreMode::kReplace:
      return " MR";
    case StoreMode::kAppend:
      return " MA";
    case StoreMode::kPrepend:
      return " MP";
    case StoreMode::kSet:
    case StoreMode::kCas:
      return "";
  }
  return "";
}

}  // namespace

template <class Out>
void AppendBase64(Out& out, std::string_view raw) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= raw.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(raw[i]) << 16 |
                      static_cast<unsigned char>(raw[i + 1]) << 8 |
                      static_cast<unsigned char>(raw[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.Append(kAlphabet[(n >> shift) & 63]);
  }
  std::size_t left = raw.size() - i;
  if (left == 0) return;
  std::uint32_t n = static_cast<unsigned char>(raw[i]) << 16;
  if (left == 2) n |= static_cast<unsigned char>(raw[i + 1]) << 8;
  out.Append(kAlphabet[(n >> 18) & 63]);
  out.Append(kAlphabet[(n >> 12) & 63]);
  out.Append(left == 2 ? kAlphabet[(n >> 6) & 63] : '=');
  out.Append('=');
}

bool MetaKeyNames(std::string_view answered, bool answered_base64, std::string_view key) {
  if (!answered_base64) return answered == key;
  struct Encoded {
    std::string text;
    void Append(char c) { text.push_back(c); }
  } encoded;
  AppendBase64(encoded, key);
  return answered == encoded.text;
}

template <class Out>
void AppendMetaGet(Out& out, std::string_view key, const MetaTokens& tokens, bool want_value,
                   bool touch, std::int64_t exptime) {
  AppendKey(out, "mg ", key, tokens);
  // k: the server names the key it answers for, so a reply meant for an earlier
  // request (one a server sent too late) is refused, not taken for this key's value.
  if (want_value) out.Append(tokens.binary_key ? " v f c" : " v f c k");
  if (touch) {
    out.Append(" T");
    AppendSigned(out, exptime);
  }
  EndRequest(out, tokens);
}

template <class Out>
void AppendMetaLeaseGet(Out& out, std::string_view key, const MetaTokens& tokens,
                        std::int64_t exptime, std::int64_t recache) {
  AppendKey(out, "mg ", key, tokens);
  // k, as AppendMetaGet's: a value for another key is refused.
  out.Append(tokens.binary_key ? " v f c N" : " v f c k N");
  AppendSigned(out, exptime);
  if (recache > 0) {
    out.Append(" R");
    AppendSigned(out, recache);
  }
  EndRequest(out, tokens);
}

template <class Out>
void AppendMetaSet(Out& out, StoreMode mode, std::string_view key, ItemView item,
                   std::int64_t exptime, const MetaTokens& tokens) {
  AppendKey(out, "ms ", key, tokens);
  out.Append(' ');
  out.AppendDecimal(item.value.size());
  out.Append(" F");
  out.AppendDecimal(item.flags);
  out.Append(" T");
  AppendSigned(out, exptime);
  if (mode == StoreMode::kCas) {
    out.Append(" C");
    out.AppendDecimal(item.cas);
  }
  out.Append(ModeFlag(mode));
  EndRequest(out, tokens);
  out.AppendValue(item.value);
  out.Append("\r\n");
}

template <class Out>
void AppendMetaDelete(Out& out, std::string_view key, const MetaTokens& tokens, bool invalidate,
                      std::uint64_t compare_cas) {
  AppendKey(out, "md ", key, tokens);
  if (invalidate) out.Append(" I");
  if (compare_cas != 0) {
    out.Append(" C");
    out.AppendDecimal(compare_cas);
  }
  EndRequest(out, tokens);
}

template <class Out>
void AppendMetaArithmetic(Out& out, bool decrement, std::string_view key, std::uint64_t delta,
                          const MetaTokens& tokens) {
  AppendKey(out, "ma ", key, tokens);
  out.Append(" D");
  out.AppendDecimal(delta);
  if (decrement) out.Append(" MD");
  if (!tokens.quiet) out.Append(" v");
  EndRequest(out, tokens);
}

template <class Out>
void AppendMetaNoop(Out& out) {
  out.Append("mn\r\n");
}

template <class Out>
void AppendMetaOperation(Out& out, const Operation& op, const MetaTokens& tokens, bool touch_on_get,
                         std::int64_t get_touch_exptime) {
  switch (op.kind) {
    case OpKind::kGet:
      AppendMetaGet(out, op.key, tokens, true, touch_on_get, get_touch_exptime);
      break;
    case OpKind::kStore:
      AppendMetaSet(out, op.mode, op.key, op.item, ExptimeFor(op.ttl), tokens);
      break;
    case OpKind::kRemove:
      AppendMetaDelete(out, op.key, tokens);
      break;
    case OpKind::kIncr:
    case OpKind::kDecr:
      AppendMetaArithmetic(out, op.kind == OpKind::kDecr, op.key, op.delta, tokens);
      break;
    case OpKind::kTouch:
      AppendMetaGet(out, op.key, tokens, false, true, ExptimeFor(op.ttl));
      break;
  }
}

// Both builders: a batch's RequestBuffer, a single operation's CommandLine.
#define CACHET_META_ENCODERS(Out)                                                                 \
  template void AppendBase64(Out&, std::string_view);                                             \
  template void AppendMetaGet(Out&, std::string_view, const MetaTokens&, bool, bool,              \
                              std::int64_t);                                                      \
  template void AppendMetaLeaseGet(Out&, std::string_view, const MetaTokens&, std::int64_t,       \
                                   std::int64_t);                                                 \
  template void AppendMetaSet(Out&, StoreMode, std::string_view, ItemView, std::int64_t,          \
                              const MetaTokens&);                                                 \
  template void AppendMetaDelete(Out&, std::string_view, const MetaTokens&, bool, std::uint64_t); \
  template void AppendMetaArithmetic(Out&, bool, std::string_view, std::uint64_t,                 \
                                     const MetaTokens&);                                          \
  template void AppendMetaNoop(Out&);                                                             \
  template void AppendMetaOperation(Out&, const Operation&, const MetaTokens&, bool, std::int64_t);
CACHET_META_ENCODERS(RequestBuffer)
CACHET_META_ENCODERS(CommandLine)
#undef CACHET_META_ENCODERS

}  // namespace cachet::memcached
