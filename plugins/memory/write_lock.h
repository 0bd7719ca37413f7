// WriteLock: the lock of a memory-store shard, and of the writers' shared lane.
//
// Only writes take it (reads take no lock, see ReadEpochs), and a write holds it
// for a hash lookup and a copy of the value, far less time than putting a thread
// to sleep and waking it takes. So a thread that finds it held spins briefly,
// then yields its core, then naps between looks (WaitAndLock). Unlocking is a
// plain release store: no sleeper is ever woken, so the unlocking thread need
// not learn whether one waits, as a mutex's atomic exchange does. It is not
// fair: the thread that just unlocked may take it again first. Meets Lockable:
// std::lock_guard for writes, try_lock for ByteBudget::Reclaim, which must
// never wait on another shard.
#pragma once

#include <atomic>

namespace cachet::memory {

// Tells the processor this is a spin-wait loop (x86's pause), where there is one.
inline void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class WriteLock {
 public:
  WriteLock() noexcept = default;
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;

  void lock() noexcept {
    if (!held_.exchange(true, std::memory_order_acquire)) return;
    WaitAndLock();
  }
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  // Spins a while, then yields, until the lock is taken.
  void WaitAndLock() noexcept;

  std::atomic<bool> held_{false};
};

}  // namespace cachet::memory
