// LoadCoordinator: the set of keys being loaded, and a condition to wait on.
#include "load_coordinator.h"

#include <algorithm>

namespace cachet {

bool LoadCoordinator::Begin(const std::string& key, TimePoint until) {
  std::unique_lock lock(mutex_);
  if (in_flight_.insert(key).second) return true;
  const auto deadline = std::min(std::chrono::steady_clock::now() + wait_limit_, until);
  finished_.wait_until(lock, deadline, [&] { return !in_flight_.contains(key); });
  return false;
}

bool LoadCoordinator::TryBegin(const std::string& key) {
  std::lock_guard lock(mutex_);
  return in_flight_.insert(key).second;
}

void LoadCoordinator::Finish(const std::string& key) {
  {
    std::lock_guard lock(mutex_);
    in_flight_.erase(key);
  }
  // One condition serves every key, so all waiters wake and re-check their own.
  finished_.notify_all();
}

}  // namespace cachet
