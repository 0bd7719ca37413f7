// Codec: typed values to Items and back.
//
// Encoding rules (docs/value-format.md has the byte-level description):
// - strings and bytes stay raw (flags 0 when uncompressed), readable by any client;
// - integers are decimal text, so server-side counters and other clients agree;
// - doubles are shortest round-trip decimal text, bools "1"/"0";
// - Json documents go through the configured Serializer;
// - then the configured Compressor runs if the encoded value is at least
//   `compress_threshold` bytes, and its output is kept only if it saves at least
//   `compress_min_savings` (a fraction) of the size;
// - no value larger than `max_value_size` is encoded (kTooLarge), and none is
//   decompressed past it, so every value a Codec writes it can read back and a
//   small stored value cannot expand to exhaust memory.
// What was applied is recorded in the Item's flags, laid out by the flags profile:
// kCachet (cachet's own layout), kPerl (Cache::Memcached) or kPython (pymemcache,
// python-memcached, pylibmc). Decoding reads the flags, never today's config.
//
// A Codec is immutable after construction and safe to share between threads. It
// does not own the Serializer and Compressor it points to: the serializer comes
// from the never-destroyed registry, the compressor is owned by the Codec.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cachet/compressor.h"
#include "cachet/export.h"
#include "cachet/item.h"
#include "cachet/serializer.h"
#include "cachet/status.h"

namespace cachet {

enum class FlagsProfile : std::uint8_t { kCachet, kPerl, kPython };
CACHET_EXPORT std::string_view FlagsProfileName(FlagsProfile p) noexcept;

// The kinds of value a Codec records (cachet profile, flags bits 0..3).
enum class ValueKind : std::uint8_t {
  kBytes = 0,     // raw bytes or text
  kInteger = 1,   // decimal text, signed or unsigned 64-bit
  kDouble = 2,    // decimal text
  kBool = 3,      // "1" or "0"
  kDocument = 4,  // a Json document through a Serializer
};

// The default of CodecOptions::max_value_size and [cache] max_value_size: 64 MiB.
inline constexpr std::size_t kDefaultMaxValueSize = std::size_t{64} << 20;

struct CodecOptions {
  std::string serializer = "json";  // for Json documents
  std::string compressor = "none";  // none | zlib | gzip | zstd
  int compression_level = 0;        // 0: the compressor's default
  std::size_t compress_threshold = 1024;
  double compress_min_savings = 0.2;
  FlagsProfile flags_profile = FlagsProfile::kCachet;
  std::size_t max_value_size = kDefaultMaxValueSize;  // bytes, before compression
};

class CACHET_EXPORT Codec {
 public:
  // kInvalidArgument for an unknown serializer or compressor, a bad option, or
  // the perl or python profile with a serializer other than json.
  static Result<std::shared_ptr<const Codec>> Create(const CodecOptions& options);

  // Each Encode replaces `*out`'s value and flags (cas is left alone). A value
  // (after serialization, before compression) over max_value_size is kTooLarge.
  Status Encode(std::string_view bytes, Item* out) const;
  Status Encode(std::int64_t v, Item* out) const;
  Status Encode(std::uint64_t v, Item* out) const;
  Status Encode(double v, Item* out) const;
  Status Encode(bool v, Item* out) const;
  Status Encode(const Json& doc, Item* out) const;
  // Strings are bytes: without these, a std::string would be ambiguous (it also
  // converts to Json) and a string literal would silently pick the bool overload.
  Status Encode(const std::string& bytes, Item* out) const {
    return Encode(std::string_view(bytes), out);
  }
  Status Encode(const char* bytes, Item* out) const {
    return Encode(std::string_view(bytes), out);
  }
  // Raw bytes as Encode(std::string_view, Item*) would store them, without copying
  // them into an Item: when no compression applies (flags 0), `*out` views
  // `bytes` itself; a compressed form is kept in a buffer of the calling thread
  // that the next encoding on that thread replaces. The Cache's writes of
  // strings use it, saving a copy of every value they store.
  Status EncodeView(std::string_view bytes, ItemView* out) const;

  // Each Decode reads what the flags say was written. kCorruption for bytes that
  // do not decode, kTooLarge for a compressed value that would expand past
  // max_value_size, kInvalidArgument when the stored kind cannot become the asked
  // type (a document read as an integer), kUnsupported for formats cachet cannot
  // read (a Perl Storable or Python pickle value), naming the flag.
  // Integers also read from raw decimal text (what incr and other clients write).
  // Under the cachet profile, which flags every document, a Json read of flags-0
  // bytes takes decimal text as its integer and other text as JSON; with a
  // binary serializer such bytes are kInvalidArgument (not a document).
  Status Decode(const Item& item, std::string* out) const;
  // The same, taking the item's bytes instead of copying them when no compression
  // was applied: the Cache's reads use it, saving an allocation and a copy per value.
  Status Decode(Item&& item, std::string* out) const;
  // The same into the item's own string, whose storage is kept (a decompressed
  // value is copied into it): Cache::GetInto reads into the caller's storage so.
  Status DecodeInPlace(Item* item) const;
  Status Decode(const Item& item, std::int64_t* out) const;
  Status Decode(const Item& item, std::uint64_t* out) const;
  Status Decode(const Item& item, double* out) const;
  Status Decode(const Item& item, bool* out) const;
  Status Decode(const Item& item, Json* out) const;
  // Any other integer type (int, unsigned, std::int16_t, ...): read as a 64-bit
  // integer of its signedness; kInvalidArgument when the number does not fit.
  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, std::int64_t> &&
             !std::same_as<T, std::uint64_t>)
  Status Decode(const Item& item, T* out) const {
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    Wide wide = 0;
    if (Status s = Decode(item, &wide); !s.ok()) return s;
    if (!std::in_range<T>(wide)) {
      return Status::InvalidArgument("the stored number " + std::to_string(wide) +
                                     " does not fit the integer type read");
    }
    *out = static_cast<T>(wide);
    return Status::OK();
  }

  // Whether raw bytes may be appended or prepended to a value stored with
  // `flags`: kUnsupported for a compressed value, a serialized document or flags
  // this codec cannot read, which the joined bytes would damage.
  Status CheckJoin(std::uint32_t flags) const;

  const CodecOptions& options() const noexcept { return options_; }

  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;
  ~Codec();

 private:
  Codec(CodecOptions options, const Serializer* serializer,
        std::unique_ptr<Compressor> compressor);

  CodecOptions options_;
  const Serializer* serializer_;            // from SerializerRegistry::Global()
  std::unique_ptr<Compressor> compressor_;  // nullptr for "none"
  std::uint32_t bytes_flags_;               // the flags of a string stored uncompressed
};

}  // namespace cachet
