// Zstandard frames built byte by byte, for the tests of decompression bounds: an
// RLE block holds one byte and a length, so a frame of a few bytes per 128 KiB
// expands to any size, and its header may declare any content size, true or not.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace cachet::test {

// A frame of `size` (at least 1) copies of `byte` in RLE blocks, with a window of
// 2^window_log bytes (10..31) and, when given, `declared` as its content size.
inline std::string ZstdRleFrame(std::uint64_t size, char byte,
                                std::optional<std::uint64_t> declared, int window_log = 17) {
  std::string frame("\x28\xB5\x2F\xFD", 4);
  // Descriptor: an 8-byte content size or none; no single segment, checksum or dictionary.
  frame += static_cast<char>(declared ? 0xC0 : 0x00);
  frame += static_cast<char>((window_log - 10) << 3);  // window: exponent, mantissa 0
  for (int i = 0; declared && i < 8; ++i) frame += static_cast<char>((*declared >> (8 * i)) & 0xFF);
  const std::uint64_t block_max =
      std::min<std::uint64_t>(128 * 1024, std::uint64_t{1} << window_log);
  std::uint64_t left = size;
  do {
    const auto n = static_cast<std::uint32_t>(std::min(left, block_max));
    left -= n;
    const std::uint32_t header = (left == 0 ? 1u : 0u) | (1u << 1) | (n << 3);  // last, RLE, size
    for (int i = 0; i < 3; ++i) frame += static_cast<char>((header >> (8 * i)) & 0xFF);
    frame += byte;
  } while (left > 0);
  return frame;
}

}  // namespace cachet::test
