// The scaling study (cachet-bench --scaling): how much faster this machine runs
// work that shares nothing on two (or --threads) threads than on one. Each
// thread loops over data of its own, so no cache line, lock or allocation is
// shared: about what a thread row could reach here, were its threads to share
// nothing. On virtual machines it moves from minute to minute, so read the
// memory store's thread rows beside a run of it. The one-thread and the
// several-thread runs take turns, so a ratio above the thread count means the
// machine slowed a one-thread run.
#pragma once

#include "bench_options.h"

namespace cachet::bench {

// Runs --repeat rounds; in each, every kind of work runs --duration seconds on
// one thread, then on the threads compared, and prints each kind's ratios: the
// median and the range. Returns the exit status. The options are checked
// (bench_options.cpp): one thread count, a duration of at least 10 ms.
int RunScalingStudy(const BenchOptions& options);

}  // namespace cachet::bench
