// Near cache: an in-process copy of recently read values in front of any store,
// so that a hot key costs no round trip.
//
// WithNearCache() wraps a store's Backend (after its envelope, so values are kept
// as the Cache reads them) in one that answers reads from `near`, a memory store
// (the memory plugin's engine, created by the caller with the byte budget), and
// sends everything else to the store. Coherence (docs/near-cache.md):
//   - ttl: an entry is served for at most `ttl` after it was read or written;
//   - tracking: the store reports every change (invalidation.h) and the entry is
//     dropped when the report arrives; `ttl` 0 keeps it until then. While the
//     store's reports are not live (before the first connection, after a lost
//     one) nothing is served from or kept in the near cache, and losing them
//     drops every entry. Misses are kept too (negative entries), only here.
// Every write through the wrapper updates or drops the key's entry, a flush
// drops all of them, and a read that raced a write or an invalidation is never
// kept. Thread-safe, as every Backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cachet/backend.h"
#include "cachet/export.h"
#include "cachet/item.h"
#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet {

enum class NearInvalidation : std::uint8_t {
  kAuto,      // tracking where the store offers kInvalidations, else ttl
  kTracking,  // the store's invalidations; a store without them is an error
  kTtl,       // entries expire after ttl; nothing else tells them apart
};

struct NearCacheOptions {
  Ttl ttl{1000};  // longest an entry is served; 0 with tracking: until invalidated
  NearInvalidation invalidation = NearInvalidation::kAuto;
  // Tracking: the key prefixes to hear about (the Cache's namespace); empty: all.
  std::vector<std::string> prefixes;
};

// The near tier's counters (NearCacheMetrics).
struct NearMetrics {
  bool enabled = false;      // a near cache is in front of the store
  bool tracking = false;     // kept coherent by the store's invalidations
  bool live = false;         // tracking: the store's reports are live now
  std::uint64_t hits = 0;    // reads answered in process (a cached miss included)
  std::uint64_t misses = 0;  // reads that went to the store
  std::uint64_t invalidations = 0;         // keys the store reported changed
  std::uint64_t dropped_by_lost_link = 0;  // entries dropped when reports were lost
  // Entries dropped because a connection was closed for bytes it could not
  // account for (net::StreamFaults): a read before may have had another's answer.
  std::uint64_t dropped_by_stream_fault = 0;
  std::uint64_t entries = 0;               // entries held now
  std::uint64_t bytes = 0;                 // bytes held now (the memory store's count)
};

// `store` behind a near cache held in `near`. kInvalidArgument when either is
// null or ttl is negative, kConfigError when tracking is asked of a store
// without kInvalidations or ttl is 0 without tracking, and the store's own
// answer when SubscribeInvalidations refuses. A subscription that is accepted
// but not live yet (Redis connects in the background, and reconnects) is not
// an error: nothing is served near until the store says it is live.
CACHET_EXPORT Result<std::shared_ptr<Backend>> WithNearCache(std::shared_ptr<Backend> store,
                                                             std::shared_ptr<Backend> near,
                                                             NearCacheOptions options);

// The near tier's counters of a Backend WithNearCache made; enabled = false for
// any other Backend.
CACHET_EXPORT NearMetrics NearCacheMetrics(const Backend& backend);

}  // namespace cachet
