// MillisUntil: a deadline as poll()'s timeout, for the engine's waits and for a
// store that polls a Connection itself; AwaitEvents: the one wait on one socket.
#pragma once

#include <string_view>

#include "cachet/export.h"
#include "cachet/net/connection.h"
#include "cachet/status.h"

namespace cachet::net {

// Milliseconds from now until `deadline`, 0 once it has passed. Rounded up, so
// that a wait never ends just before its deadline and spins.
CACHET_EXPORT int MillisUntil(Deadline deadline);

// Waits with poll() until `connection`'s socket is ready for `events` or
// `until` passes (a signal does not end the wait): ok, with what poll()
// answered in *revents when given; kTimeout "<what> timed out"; kIoError when
// poll() fails. Connection's own waits and the lone driver's share it.
CACHET_EXPORT Status AwaitEvents(const Connection& connection, short events, Deadline until,
                                 std::string_view what, short* revents = nullptr);

}  // namespace cachet::net
