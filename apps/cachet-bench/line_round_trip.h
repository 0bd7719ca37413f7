// What sharing a cache line between two threads costs on this machine: two
// threads pass a counter back and forth, and each pass moves its line between
// their cores. Thread rows scale only as well as the lines they share allow,
// and on virtual machines this cost differs widely (and from run to run), so
// cachet-bench measures it before a run with more than one thread and reports it.
#pragma once

#include <chrono>
#include <optional>

namespace cachet::bench {

// The mean time of one round trip (there and back) over `round_trips` of them;
// nullopt when the second thread did not keep up within `limit` (a loaded or
// single-core machine), as the measurement then says nothing about the line.
std::optional<std::chrono::nanoseconds> LineRoundTrip(int round_trips,
                                                      std::chrono::milliseconds limit);

}  // namespace cachet::bench
