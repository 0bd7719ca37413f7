// Tokyo Tyrant binary protocol: command codes, limits, reply shapes and the
// big-endian field helpers shared by the request encoder and the reply parser.
//
// A request is the magic byte 0xC8, a command byte, fixed big-endian fields and
// raw bytes; nothing carries the total length, so both sides must agree on the
// shape of every command. A reply starts with a status byte (0 ok, 1 failed).
// The facts are those of ttserver 1.1.41 (docs/tokyotyrant.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cachet::tokyotyrant {

inline constexpr std::uint8_t kMagic = 0xC8;

enum class Command : std::uint8_t {
  kPut = 0x10,
  kPutKeep = 0x11,
  kPutCat = 0x12,
  kPutShl = 0x13,
  kPutNr = 0x18,
  kOut = 0x20,
  kGet = 0x30,
  kMget = 0x31,
  kVsiz = 0x38,
  kIterInit = 0x50,
  kIterNext = 0x51,
  kFwmKeys = 0x58,
  kAddInt = 0x60,
  kAddDouble = 0x61,
  kSync = 0x70,
  kOptimize = 0x71,
  kVanish = 0x72,
  kCopy = 0x73,
  kRestore = 0x74,
  kSetMaster = 0x78,
  kRnum = 0x80,
  kSize = 0x81,
  kStat = 0x88,
  kMisc = 0x90,
};

// "put", "mget", ... for messages.
std::string_view CommandName(Command command) noexcept;

// ttserver answers nothing to a request whose size field is negative or above
// kMaxFieldSize, or whose item count is above kMaxItems, and is then out of step
// with the client. The client checks both limits before sending and after reading.
inline constexpr std::int32_t kMaxFieldSize = 256 << 20;
inline constexpr std::int32_t kMaxItems = 1 << 20;

// adddouble sends a number as an integer part and a fraction scaled by 10^12.
inline constexpr double kFractionScale = 1e12;

// misc option bit: do not write the operation to the server's update log.
inline constexpr std::int32_t kMiscNoUpdateLog = 1;

// What follows the status byte of a reply, by command.
enum class ReplyShape : std::uint8_t {
  kNone,          // putnr: no reply at all
  kStatus,        // the status byte alone
  kBytes,         // get, iternext, stat: [size bytes] when ok
  kInt32,         // vsiz, addint: [i32] when ok
  kDouble,        // adddouble: [i64 integer, i64 fraction] when ok
  kUint64,        // rnum, size: [u64] when ok
  kKeyValueList,  // mget: [count] then count x [ksiz vsiz key value]
  kKeyList,       // fwmkeys: [count] then count x [ksiz key]
  kMiscList,      // misc: [count] then count x [size elem]; failure is 01 00 00 00 00
};

ReplyShape ShapeOf(Command command) noexcept;

// Big-endian fields, as on the wire.
inline void AppendBigEndian32(std::uint32_t v, std::string* out) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  out->append(bytes, 4);
}

inline void AppendBigEndian64(std::uint64_t v, std::string* out) {
  AppendBigEndian32(static_cast<std::uint32_t>(v >> 32), out);
  AppendBigEndian32(static_cast<std::uint32_t>(v), out);
}

// REQUIRES: at least 4 (or 8) bytes at `p`.
inline std::uint32_t ReadBigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         std::uint32_t{u[3]};
}

inline std::uint64_t ReadBigEndian64(const char* p) {
  return (std::uint64_t{ReadBigEndian32(p)} << 32) | ReadBigEndian32(p + 4);
}

}  // namespace cachet::tokyotyrant
