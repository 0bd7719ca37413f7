// LoadCoordinator: at most one loader per key at a time within a process.
//
// Cache::GetOrCompute claims a key before running its loader; other threads that
// miss the same key meanwhile wait here for the claim to end, then read the value
// the loader stored instead of loading it again (a cache stampede). The holder
// also hands its value to those waiters (Claim::Publish), for when the store
// cannot give it back: a store that is down still sees one load per key from
// this process, not one per caller. Waiting is bounded: after `wait_limit` a
// waiter gives up and the caller loads by itself, so a loader that hangs
// delays the others but never blocks them for good. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "cachet/item.h"

namespace cachet {

class LoadCoordinator {
 public:
  explicit LoadCoordinator(std::chrono::milliseconds wait_limit) : wait_limit_(wait_limit) {}

  // True when the caller now holds the claim on `key` and must call Finish.
  // Otherwise waits until the holder finishes (or wait_limit passes, or
  // `until`) and returns false; `*shared`, if given, then gets the value the
  // holder published, if it finished with one.
  using TimePoint = std::chrono::steady_clock::time_point;
  bool Begin(const std::string& key, TimePoint until = TimePoint::max(),
             std::optional<Item>* shared = nullptr);
  // True when the caller now holds the claim on `key`; false at once when
  // another caller holds it.
  bool TryBegin(const std::string& key);
  // Ends the claim on `key`, hands `loaded` (if not null) to the callers that
  // waited for it, and wakes them.
  void Finish(const std::string& key, const Item* loaded = nullptr);

  // Holds a claim from Begin or TryBegin and ends it when destroyed, so a
  // loader that throws frees the key too.
  class Claim {
   public:
    Claim(LoadCoordinator* coordinator, const std::string& key)
        : coordinator_(coordinator), key_(key) {}
    ~Claim() { coordinator_->Finish(key_, published_); }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;

    // The value the waiters get when the claim ends; `item` must live until then.
    void Publish(const Item& item) noexcept { published_ = &item; }

   private:
    LoadCoordinator* coordinator_;   // outlives the claim
    const std::string& key_;         // outlives the claim
    const Item* published_ = nullptr;
  };

 private:
  // One claim's life: the waiters keep it to learn how it ended.
  struct Flight {
    bool ended = false;
    std::optional<Item> loaded;
  };

  const std::chrono::milliseconds wait_limit_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> in_flight_;
};

}  // namespace cachet
