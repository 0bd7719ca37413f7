// Exptime: relative seconds, or absolute Unix time past 30 days.
#include "exptime.h"

#include <chrono>

namespace cachet::memcached {

namespace {
constexpr std::int64_t kRelativeLimitSeconds = 60 * 60 * 24 * 30;
}  // namespace

std::int64_t ExptimeFor(Ttl ttl) {
  const std::int64_t ms = ttl.count();
  if (ms == 0) return 0;
  if (ms < 0) return -1;
  const std::int64_t seconds = (ms + 999) / 1000;
  if (seconds <= kRelativeLimitSeconds) return seconds;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::seconds>(now).count() + seconds;
}

}  // namespace cachet::memcached
