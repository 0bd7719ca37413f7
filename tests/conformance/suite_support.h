// Small helpers shared by the conformance tests: unique keys, capability checks,
// bounded polling for expiry and test values.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "backend_fixture.h"
#include "cachet/backend.h"
#include "cachet/cache.h"

namespace cachet::conformance {

// A key no other test (nor another process sharing the store) uses:
// "<topic>:<pid>:<counter>".
std::string UniqueKey(std::string_view topic);

// True when the store does `capability` natively or the core emulates it.
bool Supports(Capability capability);

// Polls `key` every 100 ms until it misses, for at most `limit`. True when it
// went; false if it is still there (or the store fails) when time is up.
bool GoneWithin(Cache& cache, const std::string& key, std::chrono::milliseconds limit);

// `size` bytes cycling through all 256 byte values, so NUL, CR and LF all occur.
std::string BytePattern(std::size_t size);

}  // namespace cachet::conformance
