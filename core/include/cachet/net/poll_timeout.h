// MillisUntil: a deadline as poll()'s timeout, for the engine's waits and for a
// store that polls a Connection itself.
#pragma once

#include "cachet/export.h"
#include "cachet/net/connection.h"

namespace cachet::net {

// Milliseconds from now until `deadline`, 0 once it has passed. Rounded up, so
// that a wait never ends just before its deadline and spins.
CACHET_EXPORT int MillisUntil(Deadline deadline);

}  // namespace cachet::net
