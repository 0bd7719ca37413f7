#include "line_round_trip.h"

#include <atomic>
#include <cstdint>
#include <thread>

namespace cachet::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The clock is read once per this many spins, so it stays off the line's path.
constexpr int kSpinsPerClockRead = 1024;

struct alignas(64) Line {
  std::atomic<std::uint64_t> turn{0};  // odd: the partner's turn; even: the caller's
  std::atomic<bool> abandoned{false};  // either side ran out of time
};

// Spins until `line.turn` is `expected`; false once the deadline passed or the
// other side gave up.
bool WaitFor(Line& line, std::uint64_t expected, Clock::time_point deadline) {
  for (int spins = 1; line.turn.load(std::memory_order_acquire) != expected; ++spins) {
    if (spins % kSpinsPerClockRead == 0 &&
        (line.abandoned.load(std::memory_order_relaxed) || Clock::now() >= deadline)) {
      line.abandoned.store(true, std::memory_order_relaxed);
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::chrono::nanoseconds> LineRoundTrip(int round_trips,
                                                      std::chrono::milliseconds limit) {
  if (round_trips < 2) return std::nullopt;  // the first pass is not timed
  Line line;
  const Clock::time_point deadline = Clock::now() + limit;
  const auto trips = static_cast<std::uint64_t>(round_trips);
  std::thread partner([&] {
    for (std::uint64_t i = 0; i < trips; ++i) {
      if (!WaitFor(line, 2 * i + 1, deadline)) return;
      line.turn.store(2 * i + 2, std::memory_order_release);
    }
  });
  // The first pass waits for the partner to start; it is not timed.
  line.turn.store(1, std::memory_order_release);
  bool kept_up = WaitFor(line, 2, deadline);
  const Clock::time_point start = Clock::now();
  for (std::uint64_t i = 1; i < trips && kept_up; ++i) {
    line.turn.store(2 * i + 1, std::memory_order_release);
    kept_up = WaitFor(line, 2 * i + 2, deadline);
  }
  const Clock::time_point end = Clock::now();
  partner.join();
  if (!kept_up) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(end - start) /
         static_cast<std::int64_t>(trips - 1);
}

}  // namespace cachet::bench
