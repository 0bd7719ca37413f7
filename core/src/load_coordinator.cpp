// LoadCoordinator: the keys being loaded, how each claim ended, and a condition to wait on.
#include "load_coordinator.h"

#include <algorithm>

namespace cachet {

bool LoadCoordinator::Begin(const std::string& key, TimePoint until, std::optional<Item>* shared) {
  std::unique_lock lock(mutex_);
  auto [at, claimed] = in_flight_.try_emplace(key);
  if (claimed) {
    at->second = std::make_shared<Flight>();
    return true;
  }
  const std::shared_ptr<Flight> flight = at->second;
  const auto deadline = std::min(std::chrono::steady_clock::now() + wait_limit_, until);
  finished_.wait_until(lock, deadline, [&] { return flight->ended; });
  if (flight->ended && flight->loaded && shared != nullptr) *shared = *flight->loaded;
  return false;
}

bool LoadCoordinator::TryBegin(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto [at, claimed] = in_flight_.try_emplace(key);
  if (claimed) at->second = std::make_shared<Flight>();
  return claimed;
}

void LoadCoordinator::Finish(const std::string& key, const Item* loaded) {
  {
    std::lock_guard lock(mutex_);
    const auto at = in_flight_.find(key);
    if (at == in_flight_.end()) return;
    // Copied only for callers that wait: the waiters hold the flight too.
    if (loaded != nullptr && at->second.use_count() > 1) at->second->loaded = *loaded;
    at->second->ended = true;
    in_flight_.erase(at);
  }
  // One condition serves every key, so all waiters wake and re-check their own.
  finished_.notify_all();
}

}  // namespace cachet
