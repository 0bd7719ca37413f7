// Helpers of the conformance suite.
#include "suite_support.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace cachet::conformance {

std::string UniqueKey(std::string_view topic) {
  static std::atomic<unsigned> counter{0};
  return std::string(topic) + ":" + std::to_string(::getpid()) + ":" +
         std::to_string(counter.fetch_add(1));
}

bool Supports(Capability capability) {
  return SharedCache().backend().capabilities().has(capability);
}

void SkipWithout(Capability capability) {
  SkipCase("the store does not declare " + std::string(CapabilityName(capability)));
}

bool SignedCounters() {
  std::vector<std::string> reply;
  Status s = SharedCache().backend().Extension("counters", {}, &reply);
  return s.ok() && reply.size() == 1 && reply[0] == "redis";
}

bool GoneWithin(Cache& cache, const std::string& key, std::chrono::milliseconds limit) {
  constexpr std::chrono::milliseconds kStep{100};
  const auto polls = limit / kStep;
  for (auto i = decltype(polls){0}; i <= polls; ++i) {
    if (cache.Get(key).miss()) return true;
    std::this_thread::sleep_for(kStep);
  }
  return false;
}

std::string BytePattern(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i % 256);
  return bytes;
}

}  // namespace cachet::conformance
