// ComputedRecord: what GetOrCompute keeps beside a value it loaded, inside the
// stored bytes, so every process sharing the store sees it.
//
//   offset 0  3 bytes  magic CA CE 7C (differs from the envelope's CA CE 7E)
//   offset 3  1 byte   version, 1
//   offset 4  1 byte   kind: 0 a value, 1 the loader's "not found" (no value bytes)
//   offset 5  3 bytes  zero
//   offset 8  8 bytes  fresh_until, Unix time in ms, unsigned little-endian; 0: never
//   offset 16 4 bytes  load_ms: how long the load took, unsigned little-endian
//   offset 20 4 bytes  CRC-32 (zlib's) of bytes 0..19, unsigned little-endian
//   offset 24          the value bytes, as the codec made them (the item's flags
//                      stay the item's flags)
//
// Only a header whose checksum matches is a record; other bytes read back raw.
// GetOrCompute writes a record only when one of its options needs the metadata
// (stale_ms, early_refresh, negative_ttl); otherwise it stores the plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cachet/item.h"
#include "cachet/status.h"

namespace cachet {

inline constexpr std::string_view kComputedMagic{"\xCA\xCE\x7C", 3};
inline constexpr std::uint8_t kComputedVersion = 1;
inline constexpr std::size_t kComputedHeaderSize = 24;

struct ComputedRecord {
  enum class Kind : std::uint8_t { kValue = 0, kNotFound = 1 };
  Kind kind = Kind::kValue;
  std::uint64_t fresh_until_ms = 0;  // Unix time in ms; 0: never goes stale
  std::uint32_t load_ms = 0;         // the last load's duration, for early refresh
};

// Appends the header and `value` to `*out`.
void EncodeComputedRecord(const ComputedRecord& record, std::string_view value, std::string* out);

// True, with `*record` and `*value` (a view into `stored`) filled in, when
// `stored` begins with a whole record header whose checksum matches.
bool DecodeComputedRecord(std::string_view stored, ComputedRecord* record,
                          std::string_view* value) noexcept;

// True when `bytes`, stored as a value, would read back as a record: a write
// of such bytes is refused (Cache::StoreItem), so no value cachet writes is
// misread. With `as_prefix` (Prepend) bytes too short to hold a header are
// refused when they start the magic, since what follows them is unknown.
// Inline, so bytes that do not start with the magic's first byte (byte 0xCA)
// cost two comparisons; those that do are judged out of line.
bool BeginsLikeComputedRecord(std::string_view bytes, bool as_prefix) noexcept;
inline bool LooksLikeComputedRecord(std::string_view bytes, bool as_prefix = false) noexcept {
  return !bytes.empty() && bytes.front() == kComputedMagic.front() &&
         BeginsLikeComputedRecord(bytes, as_prefix);
}

// The invalid_argument such a write gets.
Status ComputedRecordRefused();

// Whether an append (`prepend` false) or prepend may join bytes to `stored`, the
// value a read of its key found (`read`: kNotFound, an error, or ok): not onto a
// record, where a prepend would bury the header, nor onto a cached miss, where
// appended bytes would stay unseen (not_stored). A missing key may (the store
// answers not_stored); a read that failed is that failure.
Status JoinableRecord(const Status& read, std::string_view stored, bool prepend);

// Opens a record that starts with the magic (OpenComputedRecord).
Status OpenStoredRecord(Item* item);

// What every read through a Cache makes of the bytes it read: a stored record
// gives the value alone in `item`, or not_found for a cached miss; other bytes
// are left as they are. Inline, so a plain value costs one comparison.
inline Status OpenComputedRecord(Item* item) {
  if (!item->value.starts_with(kComputedMagic)) return Status::OK();
  return OpenStoredRecord(item);
}

}  // namespace cachet
