// The server-side scripts behind operations Redis has no single command for.
//
// Each runs atomically on the server. Both answer 1 when the key was changed and
// 0 when it was missing (kNotStored), and both keep the key's TTL, like
// memcached's append and prepend.
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

}  // namespace cachet::redis
