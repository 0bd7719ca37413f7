// ShardLock: the lock of one memory-store shard.
//
// Only writes take it (reads take no lock, see ReadEpochs), and a write's critical
// section is a hash lookup and a copy of the value, far shorter than putting a
// thread to sleep and waking it. A plain mutex sends the loser of a collision
// into the kernel (futex wait and wake); this one spins briefly first (glibc's
// adaptive mutex), so a collision usually costs a few hundred cycles instead. Meets Lockable: std::lock_guard for writes,
// try_lock for ByteBudget::Reclaim, which must never wait on another shard.
#pragma once

#include <pthread.h>

namespace cachet::memory {

class ShardLock {
 public:
  ShardLock() noexcept {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&mutex_, &attributes);
    pthread_mutexattr_destroy(&attributes);
  }
  ~ShardLock() { pthread_mutex_destroy(&mutex_); }
  ShardLock(const ShardLock&) = delete;
  ShardLock& operator=(const ShardLock&) = delete;

  void lock() noexcept { pthread_mutex_lock(&mutex_); }
  bool try_lock() noexcept { return pthread_mutex_trylock(&mutex_) == 0; }
  void unlock() noexcept { pthread_mutex_unlock(&mutex_); }

 private:
  pthread_mutex_t mutex_;
};

}  // namespace cachet::memory
