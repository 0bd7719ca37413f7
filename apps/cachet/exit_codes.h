// Exit codes of the cachet command-line client, and the one place that maps a
// Status onto them. Scripts rely on these numbers: never renumber them.
#pragma once

#include "cachet/status.h"

namespace cachet::cli {

enum ExitCode : int {
  kExitSuccess = 0,     // success, or a hit
  kExitNegative = 1,    // a miss, not stored, not found, or a CAS conflict
  kExitUsage = 2,       // bad command line, bad request, config or plugin error
  kExitStoreError = 3,  // the store failed: unavailable, timeout, protocol, corruption...
};

// ok -> 0; the ordinary outcomes (not_found, not_stored, exists) -> 1; a bad
// request, config or plugin -> 2; every other error -> 3.
inline int ExitCodeFor(const Status& status) {
  if (status.ok()) return kExitSuccess;
  if (!status.IsError()) return kExitNegative;
  if (status.IsInvalidArgument() || status.IsConfigError() || status.IsPluginError()) {
    return kExitUsage;
  }
  return kExitStoreError;
}

}  // namespace cachet::cli
