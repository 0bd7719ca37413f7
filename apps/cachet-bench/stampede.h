// The GetOrCompute stampede study (cachet-bench --stampede): threads, each with
// a Cache of its own (as separate processes would have), read one hot key with a
// short TTL through GetOrCompute and a slow loader, once per option set
// (coordination off, lease, lease + stale, lease + early refresh, all three).
// For each it prints how often the loader ran per TTL period and the read
// latency percentiles: what each option saves, measured side by side.
#pragma once

#include "bench_options.h"

namespace cachet::bench {

// Runs the study on options.configs[0]; returns the exit status (0, or 3 when
// the store fails).
int RunStampede(const BenchOptions& options);

}  // namespace cachet::bench
