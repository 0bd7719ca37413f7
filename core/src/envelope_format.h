// The envelope's fixed header layout, shared by envelope.cpp and the decorator.
//
//   offset 0  3 bytes  magic CA CE 7E (not valid UTF-8 at the start of text)
//   offset 3  1 byte   version, 2
//   offset 4  4 bytes  flags, unsigned little-endian
//   offset 8  8 bytes  expires_at, Unix time in ms, unsigned little-endian; 0: never
//   offset 16 4 bytes  CRC-32 (zlib's) of bytes 0..15, unsigned little-endian
//   offset 20          the value bytes
//
// A value is an envelope only when all of the first 20 bytes agree: the magic,
// the version and the checksum. Bytes another program wrote pass that by chance
// with a probability of 2^-64, so they read back raw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachet {

inline constexpr std::string_view kEnvelopeMagic{"\xCA\xCE\x7E", 3};
inline constexpr std::uint8_t kEnvelopeVersion = 2;
inline constexpr std::size_t kEnvelopeChecksumOffset = 16;
inline constexpr std::size_t kEnvelopeHeaderSize = 20;

struct EnvelopeHeader;

// DecodeEnvelope() without a Status: false, and `*header` untouched, when
// `stored` does not begin with a whole header (HasEnvelope() is false).
bool ReadEnvelopeHeader(std::string_view stored, EnvelopeHeader* header) noexcept;

}  // namespace cachet
