// Flags profiles: how a value's layout is written into, and read from, the 32-bit
// flags of an Item, for cachet's own layout and for the Perl and Python memcached
// clients' layouts (docs/value-format.md has the tables).
#pragma once

#include <cstdint>

#include "cachet/codec.h"
#include "cachet/status.h"

namespace cachet {

// What was applied to a value's bytes.
struct ValueLayout {
  ValueKind kind = ValueKind::kBytes;
  std::uint8_t serializer_id = 0;  // kDocument only
  std::uint8_t compressor_id = 0;  // 0: not compressed
};

// The flags recording `layout` under `profile`. The Perl and Python layouts have
// no bits for every kind: what they cannot record is written as flags 0 text.
std::uint32_t FlagsFor(FlagsProfile profile, const ValueLayout& layout);

// Reads `flags` under `profile`. kUnsupported naming the flags for values C++
// cannot read (Perl Storable, Python pickle) and for bits the profile does not define.
Status LayoutOf(FlagsProfile profile, std::uint32_t flags, ValueLayout* layout);

// True if `profile` has a flag bit for compressor `id` (Perl: gzip, Python: zlib).
bool ProfileRecordsCompressor(FlagsProfile profile, std::uint8_t compressor_id);

}  // namespace cachet
