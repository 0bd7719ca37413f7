// WriteLock: waiting for a held lock.
#include "write_lock.h"

#include <thread>

namespace cachet::memory {

namespace {

// Tells the processor this is a spin-wait loop (x86's pause), where there is one.
void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void WriteLock::WaitAndLock() noexcept {
  // A write holds the lock for well under a microsecond; after this many looks
  // the holder was most likely descheduled, and the core is better given away.
  constexpr int kSpins = 128;
  int spins = 0;
  do {
    // Reads until it looks free, so waiting does not keep taking the line away.
    while (held_.load(std::memory_order_relaxed)) {
      if (spins < kSpins) {
        ++spins;
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  } while (held_.exchange(true, std::memory_order_acquire));
}

}  // namespace cachet::memory
