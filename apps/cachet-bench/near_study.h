// The near cache study (cachet-bench --near): one store, a Zipf(0.9) stream of
// keys (100,000 by default, --near-keys), 90 % reads and 10 % writes, driven by
// one thread per row: the first config with [cache] near_cache off, then on,
// then the store's peer (hiredis for Redis) on the same server. For each row it
// prints the rate, the share of reads that never reached the server (from the
// server's own read counters: Redis keyspace_hits + keyspace_misses, memcached
// cmd_get) and the server's commands per second.
#pragma once

#include "bench_options.h"

namespace cachet::bench {

// Runs the study on options.configs[0]; returns the exit status (0, or 3 when
// the store fails).
int RunNearStudy(const BenchOptions& options);

}  // namespace cachet::bench
