// The store under test: what the conformance suite runs against, and how a case
// that needs a capability the store lacks is reported as skipped.
//
// cachet-conformance's main() opens a Cache from the user's config and hands it
// to SetSuite() before Catch runs any case; the cases reach it through
// SharedCache(). Once every case has run, main() closes it with CloseSuite(), as
// an application would at exit: a store that cannot shut down cleanly (hangs,
// crashes, or leaves memory behind under a sanitizer) is found there. Settings and the skip
// list are written from the main thread only (Catch runs cases on it).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cachet/cache.h"

namespace cachet::conformance {

// What the suite knows about the store beyond its Backend: limits no API
// declares, and whether the whole store may be flushed.
struct SuiteSettings {
  std::string store;                          // [cache] backend, the plugin's name
  std::optional<std::size_t> max_key_size;    // --max-key-size; none: no key limit
  std::optional<std::size_t> max_value_size;  // --max-value-size; none: no value limit
  bool flush_allowed = true;                  // false with --no-flush
};

// REQUIRES: called once, before the Catch session runs.
void SetSuite(std::unique_ptr<Cache> cache, SuiteSettings settings);

// Destroys the Cache. REQUIRES: the Catch session has finished.
void CloseSuite();

// The Cache opened on the store. REQUIRES: SetSuite() was called.
Cache& SharedCache();
const SuiteSettings& Settings();

// Marks the running case skipped for `reason` (for example "the store does not
// declare cas"). The case still counts as failed if one of its assertions fails.
void SkipCase(std::string reason);

// The reason the case named `name` was skipped, if SkipCase() was called in it.
std::optional<std::string> SkipReason(std::string_view name);

// Counts the cases that ran, so that filters matching none are an error rather
// than a pass. The reporter calls CountCase() once per case.
void CountCase();
std::size_t CasesRun();

}  // namespace cachet::conformance
