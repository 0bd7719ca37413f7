// WriteLock: waiting for a held lock.
#include "write_lock.h"

#include <chrono>
#include <thread>

namespace cachet::memory {

void WriteLock::WaitAndLock() noexcept {
  // A write holds the lock for well under a microsecond: a waiter spins first.
  // Still held after that, the holder was most likely descheduled, so the core
  // is given away; and after many yields (more threads than cores, or a holder
  // that yielding cannot reach, such as a lower real-time priority) the waiter
  // sleeps a little between looks.
  constexpr int kSpins = 128;
  constexpr int kYields = kSpins + 64;
  constexpr auto kNap = std::chrono::microseconds(50);
  int waits = 0;
  do {
    // Reads until it looks free, so waiting does not keep taking the line away.
    while (held_.load(std::memory_order_relaxed)) {
      if (waits < kSpins) {
        CpuRelax();
      } else if (waits < kYields) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(kNap);
      }
      if (waits < kYields) ++waits;
    }
  } while (held_.exchange(true, std::memory_order_acquire));
}

}  // namespace cachet::memory
