// LoadCoordinator: at most one loader per key at a time within a process.
//
// Cache::GetOrCompute claims a key before running its loader; other threads that
// miss the same key meanwhile wait here for the claim to end, then read the value
// the loader stored instead of loading it again (a cache stampede). Waiting is
// bounded: after `wait_limit` a waiter gives up and the caller loads by itself,
// so a loader that hangs delays the others but never blocks them for good.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <unordered_set>

namespace cachet {

class LoadCoordinator {
 public:
  explicit LoadCoordinator(std::chrono::milliseconds wait_limit) : wait_limit_(wait_limit) {}

  // True when the caller now holds the claim on `key` and must call Finish.
  // Otherwise waits until the holder finishes (or wait_limit passes, or
  // `until`) and returns false.
  using TimePoint = std::chrono::steady_clock::time_point;
  bool Begin(const std::string& key, TimePoint until = TimePoint::max());
  // True when the caller now holds the claim on `key`; false at once when
  // another caller holds it.
  bool TryBegin(const std::string& key);
  // Ends the claim on `key` and wakes its waiters.
  void Finish(const std::string& key);

  // Holds a claim from Begin or TryBegin and ends it when destroyed, so a
  // loader that throws frees the key too.
  class Claim {
   public:
    Claim(LoadCoordinator* coordinator, const std::string& key)
        : coordinator_(coordinator), key_(key) {}
    ~Claim() { coordinator_->Finish(key_); }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;

   private:
    LoadCoordinator* coordinator_;  // outlives the claim
    const std::string& key_;        // outlives the claim
  };

 private:
  const std::chrono::milliseconds wait_limit_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::unordered_set<std::string> in_flight_;
};

}  // namespace cachet
