// Reading the options every network store shares from its config section.
//
// memcached, Redis and Tokyo Tyrant all declare connect_timeout_ms, io_timeout_ms,
// failure_limit, retry_timeout_ms and pool_size (and, where keys may move to
// another server, failover) with the same meaning and bounds; this is the one
// place that turns them into ServerPoolOptions, so the three read them alike.
#pragma once

#include "cachet/config.h"
#include "cachet/export.h"
#include "cachet/net/server_pool.h"
#include "cachet/status.h"

namespace cachet::net {

// Fills `out` from `section` (validated against a schema declaring those keys);
// `failover` is read only when the schema declares it. kConfigError naming the
// option for a value out of bounds; `out` is then unchanged.
CACHET_EXPORT Status ReadServerPoolOptions(const ConfigSection& section, ServerPoolOptions* out);

}  // namespace cachet::net
