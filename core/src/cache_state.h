// Cache::State: what a Cache keeps beside its backend and codec. Private to
// cache.cpp and cache_compute.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

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
  std::mutex observers_mutex;
  // Every observer ever set, kept so a call still running with one never sees it freed.
  std::vector<std::shared_ptr<CacheObserver>> observers;
};

}  // namespace cachet
