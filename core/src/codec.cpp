// Codec: typed values to Items and back. The flags layout lives in
// flags_profile.cpp, number text in decimal_text.cpp; this file chooses what to
// apply on the way in and undoes what the flags say on the way out.
#include "cachet/codec.h"

#include <cmath>
#include <string>
#include <utility>

#include "decimal_text.h"
#include "flags_profile.h"
#include "serializers.h"

namespace cachet {

namespace {

std::string FlagsPrefix(std::uint32_t flags) { return "flags " + std::to_string(flags) + ": "; }

// The same error, with the flags that led to it in front of the message.
Status WithFlags(std::uint32_t flags, const Status& s) {
  return Status::FromCode(s.code(), FlagsPrefix(flags) + std::string(s.message()));
}

std::string_view KindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kBytes:
      return "bytes";
    case ValueKind::kInteger:
      return "integer";
    case ValueKind::kDouble:
      return "double";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kDocument:
      return "document";
  }
  return "unknown";
}

Status WrongKind(std::uint32_t flags, ValueKind stored, std::string_view asked) {
  return Status::InvalidArgument(FlagsPrefix(flags) + "a stored " + std::string(KindName(stored)) +
                                 " cannot be read as " + std::string(asked));
}

// True for decimal integer text (optional '-', digits, memcached's trailing space
// padding): a number, even when it does not fit the type asked for.
bool IsIntegerText(std::string_view text) {
  const std::size_t end = text.find_last_not_of(' ');
  if (end == std::string_view::npos) return false;
  text = text.substr(0, end + 1);
  if (text.front() == '-') text.remove_prefix(1);
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Text that should be a number but is not: the caller's mistake when the value was
// stored as plain bytes, damaged data when it was stored as a number. A whole
// number that does not fit the asked type (a Python int past 64 bits, a negative
// one read as unsigned) is intact data, so it is the caller's mistake too.
Status BadNumberText(std::uint32_t flags, ValueKind stored, std::string_view text,
                     const Status& parse) {
  if (stored == ValueKind::kBytes || (stored == ValueKind::kInteger && IsIntegerText(text))) {
    return WithFlags(flags, parse);
  }
  return Status::Corruption(FlagsPrefix(flags) + std::string(parse.message()));
}

// Decompressed payloads are parked here; each Decode uses its payload before the
// next Decode on the same thread replaces it.
std::string& DecodeScratch() {
  thread_local std::string scratch;
  return scratch;
}

std::string& EncodeScratch() {
  thread_local std::string scratch;
  return scratch;
}

std::string KnownSerializers() {
  std::string known;
  for (const std::string& n : SerializerRegistry::Global().Names()) {
    known += (known.empty() ? "" : ", ") + n;
  }
  return known;
}

Status ValidateOptions(const CodecOptions& o) {
  if (!std::isfinite(o.compress_min_savings) || o.compress_min_savings < 0.0 ||
      o.compress_min_savings >= 1.0) {
    return Status::InvalidArgument("compress_min_savings " +
                                   std::to_string(o.compress_min_savings) + " is outside [0, 1)");
  }
  if (o.max_value_size == 0) return Status::InvalidArgument("max_value_size must be above 0");
  switch (o.flags_profile) {
    case FlagsProfile::kCachet:
    case FlagsProfile::kPerl:
    case FlagsProfile::kPython:
      return Status::OK();
  }
  return Status::InvalidArgument("unknown flags profile");
}

}  // namespace

std::string_view FlagsProfileName(FlagsProfile p) noexcept {
  switch (p) {
    case FlagsProfile::kCachet:
      return "cachet";
    case FlagsProfile::kPerl:
      return "perl";
    case FlagsProfile::kPython:
      return "python";
  }
  return "unknown";
}

Result<std::shared_ptr<const Codec>> Codec::Create(const CodecOptions& options) {
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  const Serializer* serializer = SerializerRegistry::Global().Find(options.serializer);
  if (serializer == nullptr) {
    return Status::InvalidArgument("unknown serializer '" + options.serializer +
                                   "' (known: " + KnownSerializers() + ")");
  }
  Result<std::unique_ptr<Compressor>> compressor =
      CompressorRegistry::Global().Create(options.compressor, options.compression_level);
  if (!compressor.ok()) return compressor.status();
  const std::uint8_t compressor_id = (*compressor)->id();
  if (!ProfileRecordsCompressor(options.flags_profile, compressor_id)) {
    return Status::InvalidArgument(
        "compressor '" + options.compressor + "' cannot be recorded in the " +
        std::string(FlagsProfileName(options.flags_profile)) + " flags profile (" +
        (options.flags_profile == FlagsProfile::kPerl ? "perl: none or gzip"
                                                      : "python: none or zlib") +
        ")");
  }
  // These profiles write documents as flags 0, as they write strings (and the
  // perl one integers): as binary encodings, "7" is also msgpack's 55, "a" its 97.
  if (options.flags_profile != FlagsProfile::kCachet && serializer->id() != kJsonSerializerId) {
    return Status::InvalidArgument(
        "serializer '" + options.serializer + "' cannot be used with the " +
        std::string(FlagsProfileName(options.flags_profile)) +
        " flags profile: it writes documents as flags 0, as it writes strings, and a binary "
        "encoding could not be told from them; use serializer = json");
  }
  std::unique_ptr<Compressor> owned;
  if (compressor_id != 0) owned = std::move(compressor).value();
  return std::shared_ptr<const Codec>(new Codec(options, serializer, std::move(owned)));
}

Codec::Codec(CodecOptions options, const Serializer* serializer,
             std::unique_ptr<Compressor> compressor)
    : options_(std::move(options)),
      serializer_(serializer),
      compressor_(std::move(compressor)),
      bytes_flags_(FlagsFor(options_.flags_profile, {ValueKind::kBytes})) {}

Codec::~Codec() = default;

Status Codec::CheckJoin(std::uint32_t flags) const {
  ValueLayout layout;
  if (Status s = LayoutOf(options_.flags_profile, flags, &layout); !s.ok()) {
    return Status::Unsupported("append or prepend onto a value cachet cannot read would damage "
                               "it (" + std::string(s.message()) + ")");
  }
  if (layout.compressor_id != 0) {
    return Status::Unsupported(FlagsPrefix(flags) +
                               "append or prepend onto a compressed value would make it "
                               "undecompressable: write the whole value instead");
  }
  if (layout.kind == ValueKind::kDocument) {
    return Status::Unsupported(FlagsPrefix(flags) +
                               "append or prepend onto a serialized document would make it "
                               "unreadable: write the whole document instead");
  }
  return Status::OK();
}

// ---- encoding ---------------------------------------------------------------

namespace {

// True when `compressed` saves at least `min_savings` of `original` bytes.
bool WorthKeeping(std::size_t original, std::size_t compressed, double min_savings) {
  if (compressed >= original) return false;
  return static_cast<double>(original - compressed) >= min_savings * static_cast<double>(original);
}

// Out of line: the encoders' hot path only compares the size.
[[gnu::noinline]] Status ValueTooLarge(std::size_t size, std::size_t max_value_size) {
  return Status::TooLarge("a value of " + std::to_string(size) + " bytes is over max_value_size (" +
                          std::to_string(max_value_size) + ")");
}

// Compresses `bytes` into this thread's EncodeScratch(); when the saving is
// worth keeping `*compressed` is true and `layout` records the compressor.
[[gnu::noinline]] Status Compress(const CodecOptions& options, const Compressor& compressor,
                                  std::string_view bytes, ValueLayout* layout, bool* compressed) {
  std::string& scratch = EncodeScratch();
  Status s = compressor.Compress(bytes, &scratch);
  if (!s.ok()) return s;
  if (WorthKeeping(bytes.size(), scratch.size(), options.compress_min_savings)) {
    layout->compressor_id = compressor.id();
    *compressed = true;
  }
  return Status::OK();
}

// Refuses a value over max_value_size, then compresses it (Compress) when the
// codec has a compressor and the value reaches the threshold. Inline: most
// values only have their size compared.
inline Status CompressIfWorthIt(const CodecOptions& options, const Compressor* compressor,
                                std::string_view bytes, ValueLayout* layout, bool* compressed) {
  *compressed = false;
  if (bytes.size() > options.max_value_size) {
    return ValueTooLarge(bytes.size(), options.max_value_size);
  }
  if (compressor == nullptr || bytes.size() < options.compress_threshold) return Status::OK();
  return Compress(options, *compressor, bytes, layout, compressed);
}

// Compresses `item->value` when the options say so and sets the flags for `layout`.
Status FinishEncoding(const CodecOptions& options, const Compressor* compressor, ValueLayout layout,
                      Item* item) {
  bool compressed = false;
  Status s = CompressIfWorthIt(options, compressor, item->value, &layout, &compressed);
  if (!s.ok()) return s;
  if (compressed) item->value.swap(EncodeScratch());
  item->flags = FlagsFor(options.flags_profile, layout);
  return Status::OK();
}

}  // namespace

Status Codec::Encode(std::string_view bytes, Item* out) const {
  out->value.assign(bytes);
  return FinishEncoding(options_, compressor_.get(), {ValueKind::kBytes}, out);
}

Status Codec::EncodeView(std::string_view bytes, ItemView* out) const {
  ValueLayout layout{ValueKind::kBytes};
  bool compressed = false;
  Status s = CompressIfWorthIt(options_, compressor_.get(), bytes, &layout, &compressed);
  if (!s.ok()) return s;
  *out = compressed ? ItemView(EncodeScratch(), FlagsFor(options_.flags_profile, layout))
                    : ItemView(bytes, bytes_flags_);
  return Status::OK();
}

Status Codec::Encode(std::int64_t v, Item* out) const {
  FormatInteger(v, &out->value);
  return FinishEncoding(options_, compressor_.get(), {ValueKind::kInteger}, out);
}

Status Codec::Encode(std::uint64_t v, Item* out) const {
  FormatInteger(v, &out->value);
  return FinishEncoding(options_, compressor_.get(), {ValueKind::kInteger}, out);
}

Status Codec::Encode(double v, Item* out) const {
  FormatDouble(v, &out->value);
  return FinishEncoding(options_, compressor_.get(), {ValueKind::kDouble}, out);
}

Status Codec::Encode(bool v, Item* out) const {
  out->value.assign(v ? "1" : "0");
  return FinishEncoding(options_, compressor_.get(), {ValueKind::kBool}, out);
}

Status Codec::Encode(const Json& doc, Item* out) const {
  out->value.clear();
  Status s = serializer_->Serialize(doc, &out->value);
  if (!s.ok()) return s;
  return FinishEncoding(options_, compressor_.get(), {ValueKind::kDocument, serializer_->id()},
                        out);
}

// ---- decoding ---------------------------------------------------------------

namespace {

// A decompressor's error with the flags in front; past the bound, also the
// option that sets it.
Status DecompressFailure(std::uint32_t flags, const Status& s) {
  if (!s.IsTooLarge()) return WithFlags(flags, s);
  return Status::TooLarge(FlagsPrefix(flags) + std::string(s.message()) + " (max_value_size)");
}

// Reads the flags and undoes the compression they record. `*payload` points into
// the item or into this thread's DecodeScratch().
Status Unwrap(const Item& item, const CodecOptions& options, ValueLayout* layout,
              std::string_view* payload) {
  Status s = LayoutOf(options.flags_profile, item.flags, layout);
  if (!s.ok()) return s;
  if (layout->compressor_id == 0) {
    *payload = item.value;
    return Status::OK();
  }
  const Compressor* compressor = CompressorRegistry::Global().FindById(layout->compressor_id);
  if (compressor == nullptr) {
    return Status::Unsupported(FlagsPrefix(item.flags) + "compressor id " +
                               std::to_string(layout->compressor_id) + " is not registered");
  }
  std::string& scratch = DecodeScratch();
  s = compressor->Decompress(item.value, options.max_value_size, &scratch);
  if (!s.ok()) {
    std::string().swap(scratch);  // a refused value leaves no bound-sized buffer behind
    return DecompressFailure(item.flags, s);
  }
  *payload = scratch;
  return Status::OK();
}

template <class Int>
Status DecodeInteger(const Item& item, const CodecOptions& options, Int* out) {
  ValueLayout layout;
  std::string_view payload;
  Status s = Unwrap(item, options, &layout, &payload);
  if (!s.ok()) return s;
  if (layout.kind != ValueKind::kBytes && layout.kind != ValueKind::kInteger) {
    return WrongKind(item.flags, layout.kind, "an integer");
  }
  s = ParseInteger(payload, out);
  return s.ok() ? s : BadNumberText(item.flags, layout.kind, payload, s);
}

}  // namespace

Status Codec::Decode(const Item& item, std::string* out) const {
  ValueLayout layout;
  std::string_view payload;
  Status s = Unwrap(item, options_, &layout, &payload);
  if (!s.ok()) return s;
  // Every kind has bytes: numbers are their text, documents their encoding.
  out->assign(payload);
  return Status::OK();
}

Status Codec::Decode(Item&& item, std::string* out) const {
  Status s = DecodeInPlace(&item);
  if (s.ok()) *out = std::move(item.value);
  return s;
}

Status Codec::DecodeInPlace(Item* item) const {
  // Flags 0 are uncompressed bytes in every profile: nothing to read or undo.
  if (item->flags == 0) return Status::OK();
  ValueLayout layout;
  std::string_view payload;
  Status s = Unwrap(*item, options_, &layout, &payload);
  if (!s.ok()) return s;
  // The payload is the item's bytes themselves, or what they decompressed to.
  if (payload.data() != item->value.data()) item->value.assign(payload);
  return Status::OK();
}

Status Codec::Decode(const Item& item, std::int64_t* out) const {
  return DecodeInteger(item, options_, out);
}

Status Codec::Decode(const Item& item, std::uint64_t* out) const {
  return DecodeInteger(item, options_, out);
}

Status Codec::Decode(const Item& item, double* out) const {
  ValueLayout layout;
  std::string_view payload;
  Status s = Unwrap(item, options_, &layout, &payload);
  if (!s.ok()) return s;
  if (layout.kind == ValueKind::kBool || layout.kind == ValueKind::kDocument) {
    return WrongKind(item.flags, layout.kind, "a double");
  }
  s = ParseDouble(payload, out);
  return s.ok() ? s : BadNumberText(item.flags, layout.kind, payload, s);
}

Status Codec::Decode(const Item& item, bool* out) const {
  ValueLayout layout;
  std::string_view payload;
  Status s = Unwrap(item, options_, &layout, &payload);
  if (!s.ok()) return s;
  if (layout.kind == ValueKind::kDouble || layout.kind == ValueKind::kDocument) {
    return WrongKind(item.flags, layout.kind, "a bool");
  }
  s = ParseBool(payload, out);
  return s.ok() ? s : BadNumberText(item.flags, layout.kind, payload, s);
}

namespace {

// Digits, with a sign or padding: worth parsing as an integer (cheaply ruled out otherwise).
bool LooksDecimal(std::string_view text) {
  return !text.empty() && text.size() <= 24 && text.find_first_not_of("0123456789- ") == text.npos;
}

// A scalar kind as a Json value: a counter or a flag reads as a document too.
Status ScalarToJson(std::uint32_t flags, ValueKind kind, std::string_view text, Json* out) {
  Status s;
  if (kind == ValueKind::kInteger) {
    std::int64_t signed_value = 0;
    std::uint64_t unsigned_value = 0;
    if (ParseInteger(text, &signed_value).ok()) {
      *out = signed_value;
    } else if (s = ParseInteger(text, &unsigned_value); s.ok()) {
      *out = unsigned_value;
    }
  } else if (kind == ValueKind::kDouble) {
    double d = 0;
    if (s = ParseDouble(text, &d); s.ok()) *out = d;
  } else {
    bool b = false;
    if (s = ParseBool(text, &b); s.ok()) *out = b;
  }
  return s.ok() ? s : BadNumberText(flags, kind, text, s);
}

}  // namespace

Status Codec::Decode(const Item& item, Json* out) const {
  ValueLayout layout;
  std::string_view payload;
  Status s = Unwrap(item, options_, &layout, &payload);
  if (!s.ok()) return s;
  if (layout.kind == ValueKind::kBytes) {
    // Under the cachet profile, which marks every document, decimal text is the
    // integer it spells: a store without flags keeps integers raw (for its own
    // counters), so they read back as flags 0, and msgpack or cbor would read "7"
    // as another number (55, -24). The other profiles write documents as flags 0.
    if (options_.flags_profile == FlagsProfile::kCachet && LooksDecimal(payload)) {
      if (Json number; ScalarToJson(item.flags, ValueKind::kInteger, payload, &number).ok()) {
        *out = std::move(number);
        return Status::OK();
      }
    }
    // The cachet profile flags every document it writes: flags-0 bytes are text
    // or bytes, which a binary serializer would read as some document ("a" as 97).
    if (options_.flags_profile == FlagsProfile::kCachet &&
        serializer_->id() != kJsonSerializerId) {
      return Status::InvalidArgument(FlagsPrefix(item.flags) +
                                     "raw bytes, not a document: read them as a string");
    }
    // Profiles without a document flag write documents as flags 0 text; JSON
    // text written by another client reads as its document too.
    s = serializer_->Deserialize(payload, out);
    return s.ok() ? s : WithFlags(item.flags, s);
  }
  if (layout.kind != ValueKind::kDocument)
    return ScalarToJson(item.flags, layout.kind, payload, out);
  const Serializer* writer = SerializerRegistry::Global().FindById(layout.serializer_id);
  if (writer == nullptr) {
    return Status::Unsupported(FlagsPrefix(item.flags) + "serializer id " +
                               std::to_string(layout.serializer_id) + " is not registered");
  }
  s = writer->Deserialize(payload, out);
  return s.ok() ? s : WithFlags(item.flags, s);
}

}  // namespace cachet
