// Cache::State: what a Cache keeps beside its backend and codec. Private to
// cache.cpp and cache_compute.cpp.
#pragma once

#include <chrono>

#include "cache_metrics.h"
#include "cachet/cache.h"
#include "load_coordinator.h"

namespace cachet {

// How long a thread waits for another thread's loader before loading itself.
// Generous on purpose: a slow loader should be waited for, a hung one must not
// block its waiters for good.
inline constexpr std::chrono::seconds kLoadWaitLimit{10};

struct Cache::State {
  MetricsTable metrics;
  LoadCoordinator loads{kLoadWaitLimit};
};

}  // namespace cachet
