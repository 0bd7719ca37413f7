// Ctrl-C: SIGINT and SIGTERM only raise a flag; the run ends at the next slice
// boundary, prints what it measured, and stops its servers on the way out.
#pragma once

#include <atomic>

namespace cachet::bench {

// Installs the handlers once; returns the flag they set.
const std::atomic<bool>& InstallInterruptFlag();

}  // namespace cachet::bench
