// Exptime: relative seconds, or absolute Unix time past 30 days.
#include "exptime.h"

#include <chrono>

namespace cachet::memcached {

namespace {
constexpr std::int64_t kRelativeLimitSeconds = 60 * 60 * 24 * 30;
constexpr std::int64_t kLatestUnixTime = 2147483647;  // memcached's exptime is 32-bit signed
}  // namespace

std::int64_t ExptimeFor(Ttl ttl) {
  const std::int64_t ms = ttl.count();
  if (ms <= 0) return 0;
  // Rounded up without adding first, so Ttl::max() cannot overflow.
  const std::int64_t seconds = ms / 1000 + (ms % 1000 != 0 ? 1 : 0);
  if (seconds <= kRelativeLimitSeconds) return seconds;
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  return seconds > kLatestUnixTime - now ? 0 : now + seconds;
}

std::int64_t RecacheFor(Ttl below) {
  if (below.count() <= 0) return 0;
  const std::int64_t exptime = ExptimeFor(below);
  return exptime == 0 ? kLatestUnixTime : exptime;
}

}  // namespace cachet::memcached
