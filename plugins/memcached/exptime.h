// Exptime: a cachet Ttl as memcached's exptime field.
#pragma once

#include <cstdint>

#include "cachet/item.h"

namespace cachet::memcached {

// memcached reads up to 30 days as relative seconds and anything larger as an
// absolute Unix time, which it keeps as a signed 32-bit number: an expiry past
// 2^31-1 (January 2038) would be taken as long gone. 0 stays 0 (never expires);
// milliseconds round up to the next second; a TTL whose expiry lies past that
// limit is 0 too, the rule for any expiry a store cannot represent.
// REQUIRES: ttl is not negative (MemcachedBackend refuses it first).
std::int64_t ExptimeFor(Ttl ttl);

// The token of meta's R (recache: win an item whose remaining TTL is below it),
// which memcached reads as it reads an exptime: relative up to 30 days, an
// absolute Unix time beyond. 0 for none; a time past 2038 (Ttl::max(): any TTL)
// is the latest memcached can hold, so every item with an expiry qualifies.
std::int64_t RecacheFor(Ttl below);

}  // namespace cachet::memcached
