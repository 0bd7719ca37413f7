// SHA-1 over a whole buffer: 64-byte blocks, then the padded tail.
#include "sha1.h"

#include <cstddef>
#include <cstring>

namespace cachet::redis {

namespace {

constexpr std::size_t kBlockSize = 64;

std::uint32_t RotateLeft(std::uint32_t x, int bits) { return (x << bits) | (x >> (32 - bits)); }

std::uint32_t LoadBigEndian(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

class Sha1State {
 public:
  void Compress(const std::uint8_t* block) {
    std::uint32_t w[80];
    for (int t = 0; t < 16; ++t) w[t] = LoadBigEndian(block + 4 * t);
    for (int t = 16; t < 80; ++t) w[t] = RotateLeft(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4];
    // One round: the five words shift along, `mixed` being the round's function
    // of b, c and d plus its constant (FIPS 180-4 sections 4.1.1 and 4.2.1).
    auto round = [&](std::uint32_t mixed, std::uint32_t word) {
      const std::uint32_t next = RotateLeft(a, 5) + mixed + e + word;
      e = d;
      d = c;
      c = RotateLeft(b, 30);
      b = a;
      a = next;
    };
    // Four loops of 20 rather than one choosing the function each round.
    for (int t = 0; t < 20; ++t) round((d ^ (b & (c ^ d))) + 0x5a827999u, w[t]);
    for (int t = 20; t < 40; ++t) round((b ^ c ^ d) + 0x6ed9eba1u, w[t]);
    for (int t = 40; t < 60; ++t) round(((b & c) | (d & (b | c))) + 0x8f1bbcdcu, w[t]);
    for (int t = 60; t < 80; ++t) round((b ^ c ^ d) + 0xca62c1d6u, w[t]);
    h_[0] += a;
    h_[1] += b;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
  }

  Sha1Digest Digest() const {
    Sha1Digest out{};
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h_[i] >> (24 - 8 * j));
    }
    return out;
  }

 private:
  std::uint32_t h_[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
};

}  // namespace

Sha1Digest Sha1(std::string_view bytes) {
  Sha1State state;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t whole = bytes.size() / kBlockSize * kBlockSize;
  for (std::size_t offset = 0; offset < whole; offset += kBlockSize) state.Compress(data + offset);

  // The tail, a 1 bit, zeros, and the message length in bits (big-endian) fill
  // one or two final blocks.
  std::uint8_t tail[2 * kBlockSize] = {};
  const std::size_t rest = bytes.size() - whole;
  if (rest > 0) std::memcpy(tail, data + whole, rest);
  tail[rest] = 0x80;
  const std::size_t tail_size = rest + 1 + 8 <= kBlockSize ? kBlockSize : 2 * kBlockSize;
  const std::uint64_t bit_length = static_cast<std::uint64_t>(bytes.size()) * 8;
  for (int i = 0; i < 8; ++i) {
    tail[tail_size - 1 - i] = static_cast<std::uint8_t>(bit_length >> (8 * i));
  }
  for (std::size_t offset = 0; offset < tail_size; offset += kBlockSize) {
    state.Compress(tail + offset);
  }
  return state.Digest();
}

std::string Sha1Hex(std::string_view bytes) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  const Sha1Digest digest = Sha1(bytes);
  std::string hex;
  hex.reserve(2 * digest.size());
  for (std::uint8_t byte : digest) {
    hex.push_back(kHexDigits[byte >> 4]);
    hex.push_back(kHexDigits[byte & 0x0f]);
  }
  return hex;
}

}  // namespace cachet::redis
