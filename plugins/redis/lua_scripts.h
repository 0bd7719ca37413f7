// The server-side scripts behind operations Redis has no single command for.
//
// Each runs atomically on the server. Append, prepend and the counter keep the
// key's TTL; cas sets the TTL it is given, as a SET does. Append and prepend
// answer 1 when the key was changed and 0 when it was missing (kNotStored), like
// memcached's. Every `sha1` is checked against its source by test_redis_sha1.
#pragma once

#include <string_view>

namespace cachet::redis {

struct LuaScript {
  std::string_view source;
  std::string_view sha1;  // SHA-1 of `source`, the EVALSHA name
};

// Plain APPEND creates a missing key; memcached's append does not.
inline constexpr LuaScript kAppendScript{
    "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end "
    "redis.call('APPEND', KEYS[1], ARGV[1]) return 1",
    "7c91cf8b67a46e9d0476a40fd15ee773fcb2d155"};

inline constexpr LuaScript kPrependScript{
    "local v = redis.call('GET', KEYS[1]) if not v then return 0 end "
    "redis.call('SET', KEYS[1], ARGV[1] .. v, 'KEEPTTL') return 1",
    "c1973650bf4cd252edbeb7839900f337cbe228a6"};

// Compare-and-swap on a value's bytes. Redis keeps no version beside a plain
// string, so a value's token is derived from the value itself: the first 16 hex
// digits of its SHA-1 (cas_token.h computes the same on the client), never all
// zeros. ARGV[1] is the expected token in that form, ARGV[2] the new value,
// ARGV[3] the TTL in ms ("0": none, and an old TTL is dropped, as by SET).
// Answers 1 when stored, 0 when the token no longer matches, false (a nil
// reply) for a missing key. A value rewritten with the same bytes keeps its
// token (ABA): the swap then succeeds, which is harmless for a cache since the
// bytes it replaces are exactly those the caller read.
inline constexpr LuaScript kCasScript{
    "local v = redis.call('GET', KEYS[1]) if not v then return false end "
    "local t = string.sub(redis.sha1hex(v), 1, 16) "
    "if t == '0000000000000000' then t = '0000000000000001' end "
    "if t ~= ARGV[1] then return 0 end "
    "if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) "
    "else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return 1",
    "62de37113defc752747a10cf054ab6fd9897c565"};

// memcached's counters, exactly: unsigned 64-bit decimal text, incr wrapping at
// 2^64, decr stopping at 0, false (a nil reply) for a missing key, an error for a
// value that is not such a number; the TTL is kept. ARGV[1] is the delta in
// decimal, ARGV[2] "+" or "-". Lua numbers are doubles, exact only to 2^53, so
// the arithmetic runs on two exact halves split at 10^10.
inline constexpr LuaScript kCounterScript{
    "local v = redis.call('GET', KEYS[1]) if not v then return false end if #v == 0 "
    "or #v > 20 or string.find(v, '%D') then return redis.error_reply('ERR value is "
    "not an unsigned 64-bit decimal number') end local function split(s) local n = #s "
    "if n <= 10 then return 0, tonumber(s) end return tonumber(string.sub(s, 1, n - "
    "10)), tonumber(string.sub(s, n - 9)) end local vh, vl = split(v) if vh > "
    "1844674407 or (vh == 1844674407 and vl > 3709551615) then return "
    "redis.error_reply('ERR value is not an unsigned 64-bit decimal number') end "
    "local dh, dl = split(ARGV[1]) local h, l if ARGV[2] == '+' then h, l = vh + dh, "
    "vl + dl if l >= 1e10 then h, l = h + 1, l - 1e10 end if h > 1844674407 or (h == "
    "1844674407 and l >= 3709551616) then h, l = h - 1844674407, l - 3709551616 if l "
    "< 0 then h, l = h - 1, l + 1e10 end end elseif vh < dh or (vh == dh and vl < dl) "
    "then h, l = 0, 0 else h, l = vh - dh, vl - dl if l < 0 then h, l = h - 1, l + "
    "1e10 end end local r if h > 0 then r = string.format('%d%010d', h, l) else r = "
    "string.format('%d', l) end redis.call('SET', KEYS[1], r, 'KEEPTTL') return r",
    "a79ca91e2e6111c985a4a8348a4598928a668b1a"};

// GetOrCompute's lease: the value and the lock in one step. KEYS[1] is the key,
// KEYS[2] its lock key (same slot); ARGV[1] the lease in ms, ARGV[2] when a
// present value is leased too (0: never; -1: always; n: when its PTTL is below
// n ms, its stale window), ARGV[3] the lock's text. A lock is taken with SET NX
// PX when the key is missing or leased. Answers {value or nil, 0: no lease
// involved, 1: this caller took the lock, 2: another caller holds it}.
inline constexpr LuaScript kLeaseGetScript{
    "local v = redis.call('GET', KEYS[1]) local below = tonumber(ARGV[2]) "
    "if v and below == 0 then return {v, 0} end "
    "if v and below > 0 then local left = redis.call('PTTL', KEYS[1]) "
    "if left < 0 or left >= below then return {v, 0} end end "
    "local won = redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[1]) "
    "if won then return {v or false, 1} end return {v or false, 2}",
    "17bff407c378f50508313a2a42e2b3a8414e22f4"};

// Ends GetOrCompute's lease: deletes the lock KEYS[1] only while it holds this
// caller's token ARGV[1], so a holder whose lease lapsed and was taken by
// another caller leaves the new holder's lock. Answers 1 if deleted, else 0.
inline constexpr LuaScript kLeaseEndScript{
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
    "6fbe84d1140fd2047394924af9d845b83c070bec"};

}  // namespace cachet::redis
