// Small helpers shared by the conformance cases: unique keys, capability checks,
// bounded polling for expiry, test values, and a Status in an assertion.
#pragma once

#include <catch2/catch.hpp>
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

// A Status in an assertion: REQUIRE(Ok(cache.Set(key, value))) holds when it is
// ok, and a failure line then shows the Status itself (code and message), so a
// store that fails says why, not only "false".
struct StatusCheck {
  Status status;
  explicit operator bool() const noexcept { return status.ok(); }
};
inline StatusCheck Ok(Status status) { return {std::move(status)}; }
template <class T>
StatusCheck Ok(const Lookup<T>& lookup) {
  return {lookup.status()};
}
template <class T>
StatusCheck Ok(const Result<T>& result) {
  return {result.status()};
}

}  // namespace cachet::conformance

// A status code in an assertion reads as its name ("not_found"), not a number.
template <>
struct Catch::StringMaker<cachet::StatusCode> {
  static std::string convert(cachet::StatusCode code) {
    return std::string(cachet::StatusCodeName(code));
  }
};

template <>
struct Catch::StringMaker<cachet::conformance::StatusCheck> {
  static std::string convert(const cachet::conformance::StatusCheck& check) {
    return check.status.ToString();
  }
};
