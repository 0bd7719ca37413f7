// Tokyo Tyrant request encoder: appends one binary request to a buffer.
//
// Every function checks its inputs against the protocol's limits first and
// leaves `*out` untouched when it returns an error, so a caller can encode a
// pipeline into one reused buffer and skip the request it could not encode.
// A size above kMaxFieldSize or a count above kMaxItems is kTooLarge: the server
// would answer nothing and fall out of step. No I/O happens here.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cachet/status.h"
#include "tt_protocol.h"

namespace cachet::tokyotyrant {

// put, putkeep, putcat and putnr: [ksiz vsiz key value].
Status EncodeStore(Command command, std::string_view key, std::string_view value, std::string* out);

// putshl: [ksiz vsiz width key value]; keeps the last `width` bytes after
// appending. A negative width is kInvalidArgument.
Status EncodePutShl(std::string_view key, std::string_view value, std::int32_t width,
                    std::string* out);

// out, get and vsiz: [ksiz key].
Status EncodeKeyCommand(Command command, std::string_view key, std::string* out);

// mget: [count] then count x [ksiz key]. Above kMaxItems keys the caller splits.
Status EncodeMget(std::span<const std::string_view> keys, std::string* out);

// fwmkeys: [psiz max prefix]; a negative `max` means no limit.
Status EncodeFwmKeys(std::string_view prefix, std::int32_t max, std::string* out);

// addint: [ksiz num key].
Status EncodeAddInt(std::string_view key, std::int32_t num, std::string* out);

// adddouble: [ksiz integer fraction key], integer and fraction x 10^12 both
// carrying the sign. NaN, infinities and magnitudes beyond 2^63 are
// kInvalidArgument.
Status EncodeAddDouble(std::string_view key, double num, std::string* out);

// Commands without arguments: iterinit, iternext, sync, vanish, rnum, size, stat.
Status EncodeBare(Command command, std::string* out);

// optimize: [psiz params]; the params are the database's tuning string.
Status EncodeOptimize(std::string_view params, std::string* out);

// copy: [psiz path]. A path starting with '@' makes ttserver run it as a shell
// command, so it is refused with kInvalidArgument.
Status EncodeCopy(std::string_view path, std::string* out);

// restore: [psiz timestamp(u64 µs) opts path]: replays the update logs in `path`.
Status EncodeRestore(std::string_view path, std::uint64_t timestamp_us, std::int32_t opts,
                     std::string* out);

// setmst: [hsiz port timestamp(u64 µs) opts host]: sets the replication master.
Status EncodeSetMaster(std::string_view host, std::int32_t port, std::uint64_t timestamp_us,
                       std::int32_t opts, std::string* out);

// misc: [nsiz opts argc name] then argc x [size arg].
Status EncodeMisc(std::string_view name, std::int32_t opts, std::span<const std::string_view> args,
                  std::string* out);

// Splits `num` into adddouble's integer part and fraction x 10^12.
// REQUIRES: `num` is finite and |num| < 2^63.
void SplitDouble(double num, std::int64_t* integer, std::int64_t* fraction);
// The inverse: integer + fraction / 10^12.
double JoinDouble(std::int64_t integer, std::int64_t fraction);

}  // namespace cachet::tokyotyrant
