// BackendFixture: how the conformance suite gets a store to test.
//
// The suite is written once and runs against every backend. Which one is chosen
// at run time by $CACHET_CONFORMANCE_BACKEND ("memory" when unset); its fixture
// prepares the store (a network fixture starts a real server on a free loopback
// port through tests/support/) and hands back the Config that opens a Cache on it.
//
// Adding a backend: write <name>_fixture.cpp defining
//   namespace cachet::conformance::<name>_fixture {
//   std::unique_ptr<BackendFixture> Make();
//   }
// and add <name> to CACHET_CONFORMANCE_BACKENDS in CMakeLists.txt. CMake then
// compiles the file, registers the fixture (fixtures.inc) and registers the suite
// with CTest as "conformance.<name>:...".
//
// The fixture and the Cache live until the process exits (the fixture's
// destructor stops any server it started); they are not synchronized, so create
// them from the test's main thread before starting threads.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "cachet/result.h"

namespace cachet::conformance {

class BackendFixture {
 public:
  BackendFixture() = default;
  BackendFixture(const BackendFixture&) = delete;
  BackendFixture& operator=(const BackendFixture&) = delete;
  virtual ~BackendFixture() = default;

  // Prepares the store and returns the config that opens it. Called once.
  virtual Result<Config> Setup() = 0;

  // The largest value the store accepts, if it has a limit: the suite checks
  // that a value well above it is refused with too_large.
  virtual std::optional<std::size_t> max_value_size() const { return std::nullopt; }
  // The longest key (namespace included) the store accepts, if it has a limit.
  virtual std::optional<std::size_t> max_key_size() const { return std::nullopt; }
  // False when the store is shared with tests that run at the same time, so
  // flushing it would pull their keys away.
  virtual bool flush_allowed() const { return true; }
};

using FixtureFactory = std::unique_ptr<BackendFixture> (*)();

struct FixtureEntry {
  std::string_view name;
  FixtureFactory make;
};

// Every fixture compiled in, in CACHET_CONFORMANCE_BACKENDS order.
std::span<const FixtureEntry> RegisteredFixtures();

// $CACHET_CONFORMANCE_BACKEND, or "memory" when it is unset or empty.
std::string SelectedBackend();

// The selected backend's fixture and a Cache opened on it, made on first use.
// A fixture that cannot be made or a store that cannot be opened fails the
// calling test with the reason.
BackendFixture& Fixture();
Cache& SharedCache();

}  // namespace cachet::conformance
