// Waiting in a test for what another thread or process does: each wait polls
// a condition and is bounded, so a test that waits in vain fails, never hangs.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

namespace cachet::test {

// Polls `done` every `every` until it holds or `limit` passed: whether it held.
template <class Done>
bool WaitUntil(Done done, std::chrono::milliseconds limit,
               std::chrono::milliseconds every = std::chrono::milliseconds(5)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

// Waits (at most 10 s) until `flag` is set.
inline bool WaitFor(const std::atomic<bool>& flag) {
  return WaitUntil([&] { return flag.load(); }, std::chrono::milliseconds(10000));
}

}  // namespace cachet::test
