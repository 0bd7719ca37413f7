// Small helpers shared by the conformance cases: unique keys, capability checks,
// bounded polling for expiry and test values.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/cache.h"
#include "suite_context.h"

namespace cachet::conformance {

// A key no other test (nor another process sharing the store) uses:
// "<topic>:<pid>:<counter>".
std::string UniqueKey(std::string_view topic);

// True when the store does `capability` natively or the core emulates it.
bool Supports(Capability capability);

// Marks the running case skipped because the store does not declare
// `capability`; the case returns right after (what it still checked, such as an
// unsupported answer, counts if it failed).
void SkipWithout(Capability capability);

// True when the store declares signed 64-bit counters where a missing key
// counts from 0 (Redis' INCRBY: Extension("counters") answers "redis"); false
// for memcached's.
bool SignedCounters();

// Polls `key` every 100 ms until it misses, for at most `limit`. True when it
// went; false if it is still there (or the store fails) when time is up.
bool GoneWithin(Cache& cache, const std::string& key, std::chrono::milliseconds limit);

// `size` bytes cycling through all 256 byte values, so NUL, CR and LF all occur.
std::string BytePattern(std::size_t size);

}  // namespace cachet::conformance
