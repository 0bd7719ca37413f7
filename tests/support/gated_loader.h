// GatedLoader: a GetOrCompute loader the test holds inside its load, so that
// other callers meet the lease it took: it says it started, then waits (at
// most 10 s) until the test releases it, and answers what the test set.
#pragma once

#include <atomic>
#include <string>

#include "cachet/result.h"
#include "cachet/status.h"
#include "support/waits.h"

namespace cachet::test {

struct GatedLoader {
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  Result<std::string> answer = Status::IoError("gave up");
  Result<std::string> operator()() {
    started = true;
    if (!WaitFor(release)) return Status::Timeout("never released");
    return answer;
  }
};

}  // namespace cachet::test
