// The command each cachet operation becomes, appended to a request buffer.
// See redis_backend.h for the mapping and lua_scripts.h for append/prepend.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cachet/backend.h"

namespace cachet::redis {

// The longest TTL sent to Redis as an expiry. Redis adds its clock to the TTL
// in a signed 64-bit count of milliseconds and refuses a sum that overflows;
// 2^62 ms (146 million years) leaves room for any clock. A longer TTL is sent as
// no expiry, the rule for an expiry a store cannot represent.
inline constexpr std::int64_t kLongestTtlMs = std::int64_t{1} << 62;

// True when `ttl` is sent as an expiry (PX, PEXPIRE); false when it is sent as
// none (0, or longer than kLongestTtlMs). The encoders and the touch reply
// readers ask the same question. REQUIRES: ttl is not negative.
inline bool SendsExpiry(Ttl ttl) { return ttl.count() > 0 && ttl.count() <= kLongestTtlMs; }

void AppendGet(std::string* out, std::string_view key);
// SET key value [PX ms] [NX|XX]. REQUIRES: mode is kSet, kAdd or kReplace.
void AppendSet(std::string* out, StoreMode mode, std::string_view key, std::string_view value,
               Ttl ttl);
// EVALSHA (by_source false) or EVAL of the append or prepend script.
// REQUIRES: mode is kAppend or kPrepend.
void AppendScript(std::string* out, StoreMode mode, std::string_view key, std::string_view value,
                  bool by_source);
// EVALSHA (by_source false) or EVAL of the cas script: store `value` if the
// value under `key` still has `token` (cas_token.h). `ttl` as for SET: one
// SendsExpiry() refuses stores it without expiry.
void AppendCas(std::string* out, std::string_view key, std::string_view value, std::uint64_t token,
               Ttl ttl, bool by_source);
void AppendDel(std::string* out, std::string_view key);
// EVALSHA (by_source false) or EVAL of the lease script (lua_scripts.h) on `key`
// and its `lock` key: `lease_ms` >= 1, `recache_below_ms` 0 (never), -1 (always)
// or the PTTL under which a present value is leased too.
void AppendLeaseGet(std::string* out, std::string_view key, std::string_view lock,
                    std::int64_t lease_ms, std::int64_t recache_below_ms, std::string_view owner,
                    bool by_source);
// EVALSHA (by_source false) or EVAL of the script that deletes `lock` only
// while it holds `owner` (lua_scripts.h).
void AppendLeaseEnd(std::string* out, std::string_view lock, std::string_view owner,
                    bool by_source);
enum class CounterMode : std::uint8_t {
  kMemcached,  // the counter script: unsigned, wrapping, missing key not found
  kNative,     // INCRBY / DECRBY: signed, a missing key counts from 0
};

// INCR / DECR for a delta of 1, else INCRBY or DECRBY (REQUIRES: delta fits in
// a signed 64-bit number), or the counter script by EVALSHA (by_source false)
// or EVAL.
void AppendCounter(std::string* out, CounterMode mode, bool increment, std::string_view key,
                   std::uint64_t delta, bool by_source);
// PEXPIRE key ms, or GETEX key PERSIST when SendsExpiry() is false (PERSIST
// cannot tell a missing key from one without a TTL).
void AppendTouch(std::string* out, std::string_view key, Ttl ttl);
// GETEX key PX ms, or GETEX key PERSIST when SendsExpiry() is false.
void AppendGetAndTouch(std::string* out, std::string_view key, Ttl ttl);

// kInvalidArgument when `delta` does not fit Redis' signed 64-bit counters.
Status CheckCounterDelta(std::uint64_t delta);

}  // namespace cachet::redis
