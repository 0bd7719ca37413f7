// Exptime: a cachet Ttl as memcached's exptime field.
#pragma once

#include <cstdint>

#include "cachet/item.h"

namespace cachet::memcached {

// memcached reads up to 30 days as relative seconds and anything larger as an
// absolute Unix time. 0 stays 0 (never expires); milliseconds round up to the
// next second; a negative TTL is -1 (already expired).
std::int64_t ExptimeFor(Ttl ttl);

}  // namespace cachet::memcached
