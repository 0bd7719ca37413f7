// SHA-1 (FIPS 180-4), for the Redis plugin's CAS tokens.
//
// Redis scripts can hash a value (redis.sha1hex) but cannot keep a version
// number beside a plain string, so a value's CAS token is derived from its
// bytes: the client computes the same SHA-1 here that the cas script computes on
// the server. SHA-1 serves as a fingerprint, not as security: nothing here
// defends against someone crafting colliding values on purpose.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cachet::redis {

using Sha1Digest = std::array<std::uint8_t, 20>;

Sha1Digest Sha1(std::string_view bytes);
// The digest as 40 lowercase hex digits, as redis.sha1hex and sha1sum print it.
std::string Sha1Hex(std::string_view bytes);

}  // namespace cachet::redis
