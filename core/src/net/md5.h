// MD5 (RFC 1321), only for key placement: ketama hashes with it. Not for security.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cachet::net {

using Md5Digest = std::array<std::uint8_t, 16>;

Md5Digest Md5(std::string_view data) noexcept;

}  // namespace cachet::net
