// Printable: bytes quoted for an error message (control bytes as \xNN, cut short).
#pragma once

#include <string>
#include <string_view>

namespace cachet::memcached {

std::string Printable(std::string_view bytes, std::size_t max_bytes = 40);

}  // namespace cachet::memcached
