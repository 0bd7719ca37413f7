// MD5 as RFC 1321 specifies it: 64-byte blocks, four rounds of 16 steps, the
// message padded with 0x80, zeros and its bit length (little-endian).
#include "net/md5.h"

#include <cstring>

namespace cachet::net {

namespace {

// Per-step left-rotation amounts, four per round (RFC 1321, section 3.4).
constexpr std::uint32_t kShift[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

// T[i] = floor(2^32 * |sin(i + 1)|), written out to stay constexpr.
constexpr std::uint32_t kSine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

constexpr std::uint32_t RotateLeft(std::uint32_t x, std::uint32_t n) {
  return (x << n) | (x >> (32 - n));
}

std::uint32_t LoadLittleEndian(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

void StoreLittleEndian(std::uint32_t v, std::uint8_t* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// One round step: the round's boolean function and which message word it reads.
std::uint32_t RoundFunction(int step, std::uint32_t b, std::uint32_t c, std::uint32_t d,
                            int* word) {
  const int round = step / 16;
  switch (round) {
    case 0:
      *word = step;
      return (b & c) | (~b & d);
    case 1:
      *word = (5 * step + 1) % 16;
      return (b & d) | (c & ~d);
    case 2:
      *word = (3 * step + 5) % 16;
      return b ^ c ^ d;
    default:
      *word = (7 * step) % 16;
      return c ^ (b | ~d);
  }
}

void ProcessBlock(const std::uint8_t* block, std::uint32_t state[4]) {
  std::uint32_t x[16];
  for (int i = 0; i < 16; ++i) x[i] = LoadLittleEndian(block + 4 * i);
  std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  for (int step = 0; step < 64; ++step) {
    int word = 0;
    const std::uint32_t f = RoundFunction(step, b, c, d, &word);
    const std::uint32_t rotated =
        RotateLeft(a + f + x[word] + kSine[step], kShift[step / 16][step % 4]);
    a = d;
    d = c;
    c = b;
    b = b + rotated;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

}  // namespace

Md5Digest Md5(std::string_view data) noexcept {
  std::uint32_t state[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t whole = data.size() / 64 * 64;
  for (std::size_t off = 0; off < whole; off += 64) ProcessBlock(bytes + off, state);

  // The tail, the 0x80 marker and the 64-bit bit length fill one or two blocks.
  std::uint8_t tail[128] = {};
  std::size_t rest = data.size() - whole;
  if (rest > 0) std::memcpy(tail, bytes + whole, rest);
  tail[rest] = 0x80;
  std::size_t tail_len = rest < 56 ? 64 : 128;
  std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 8 + i] = static_cast<std::uint8_t>(bits >> (8 * i));
  for (std::size_t off = 0; off < tail_len; off += 64) ProcessBlock(tail + off, state);

  Md5Digest digest;
  for (int i = 0; i < 4; ++i) StoreLittleEndian(state[i], digest.data() + 4 * i);
  return digest;
}

}  // namespace cachet::net
