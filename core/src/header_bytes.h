// Byte-level helpers shared by cachet's stored headers (envelope.cpp,
// computed_record.cpp): little-endian integers and the CRC32 of a header.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cachet {

template <class UInt>
void AppendLittleEndian(UInt v, std::string* out) {
  for (std::size_t i = 0; i < sizeof(UInt); ++i) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
}

// REQUIRES: bytes.size() >= sizeof(UInt).
template <class UInt>
UInt ReadLittleEndian(std::string_view bytes) {
  UInt v = 0;
  for (std::size_t i = 0; i < sizeof(UInt); ++i) {
    v |= static_cast<UInt>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return v;
}

// The CRC32 (zlib's) of the first `size` bytes of `header`.
inline std::uint32_t HeaderChecksum(std::string_view header, std::size_t size) {
  const auto* bytes = reinterpret_cast<const Bytef*>(header.data());
  return static_cast<std::uint32_t>(crc32(0L, bytes, static_cast<uInt>(size)));
}

}  // namespace cachet
