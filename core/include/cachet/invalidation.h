// Invalidations: how a store tells a near cache (near_cache.h) which keys
// changed, so that in-process copies are dropped when anyone writes them.
//
// A store plugin that can do this declares Capability::kInvalidations and
// implements Backend::SubscribeInvalidations (backend.h); the Redis plugin does
// it with CLIENT TRACKING, and a third-party store can offer it the same way.
// The store calls the listener from a thread of its own, for as long as the
// subscription object it returned lives; destroying that object stops the calls
// (it waits for a call under way to return).
//
// The contract a store keeps: OnTrackingLive(true) only once every later change
// will be reported; OnTrackingLive(false) as soon as it may have missed one (a
// lost connection, a server restart), before it reports anything else; then it
// reconnects and says OnTrackingLive(true) again.
#pragma once

#include <span>
#include <string_view>

#include "cachet/export.h"

namespace cachet {

// Receives a store's invalidations. Every method may be called from the store's
// thread, concurrently with the listener's other users, and must not throw.
class CACHET_EXPORT InvalidationListener {
 public:
  InvalidationListener() = default;
  InvalidationListener(const InvalidationListener&) = delete;
  InvalidationListener& operator=(const InvalidationListener&) = delete;
  virtual ~InvalidationListener();

  // These keys (as the store holds them, namespace included) may have changed.
  virtual void OnInvalidate(std::span<const std::string_view> keys) noexcept = 0;
  // Any key may have changed (a flush of the store).
  virtual void OnInvalidateAll() noexcept = 0;
  // true: changes are reported from now on; false: some may have been missed,
  // and none will be reported until the next true.
  virtual void OnTrackingLive(bool live) noexcept = 0;
};

// Keeps the listener subscribed while it lives (Backend::SubscribeInvalidations).
class CACHET_EXPORT InvalidationSubscription {
 public:
  InvalidationSubscription() = default;
  InvalidationSubscription(const InvalidationSubscription&) = delete;
  InvalidationSubscription& operator=(const InvalidationSubscription&) = delete;
  virtual ~InvalidationSubscription();
};

}  // namespace cachet
