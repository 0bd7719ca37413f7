// The envelope's fixed header layout, shared by envelope.cpp and the decorator.
//
//   offset 0  3 bytes  magic CA CE 7E (not valid UTF-8 at the start of text)
//   offset 3  1 byte   version, 1
//   offset 4  4 bytes  flags, unsigned little-endian
//   offset 8  8 bytes  expires_at, Unix time in ms, unsigned little-endian; 0: never
//   offset 16          the value bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachet {

inline constexpr std::string_view kEnvelopeMagic{"\xCA\xCE\x7E", 3};
inline constexpr std::uint8_t kEnvelopeVersion = 1;
inline constexpr std::size_t kEnvelopeHeaderSize = 16;

}  // namespace cachet
