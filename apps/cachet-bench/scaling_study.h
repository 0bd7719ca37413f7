// The scaling study (cachet-bench --scaling): how much faster this machine runs
// work that shares nothing on two (or --threads) threads than on one. Each
// thread loops over data of its own, so no cache line, lock or allocation is
// shared: the ratio is the most any thread row can reach here, and on virtual
// machines it is below the thread count and moves from minute to minute, more
// for some kinds of work (divisions) than others. Read the memory store's thread
// rows beside it.
#pragma once

#include "bench_options.h"

namespace cachet::bench {

// Runs --repeat rounds; in each, every kind of work runs --duration seconds on
// one thread, then on the threads compared, and prints each kind's ratios: the
// median and the range. Returns the exit status.
int RunScalingStudy(const BenchOptions& options);

}  // namespace cachet::bench
