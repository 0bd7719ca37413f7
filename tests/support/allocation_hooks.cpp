// The global operator new family of a test executable, replaced: see
// allocation_hooks.h.
//
// The whole unaligned family is replaced, so every block (including the memory
// store's nothrow and array allocations, made in the plugin) is allocated and
// freed by the same pair: replacing only some of them mixes this malloc with
// the sanitizer's own operator delete, or the other way round. Not inlined, so
// the compiler never pairs a new-expression with free() itself.
#include "support/allocation_hooks.h"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>

namespace {

std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};
// No allocation is of this size: nothing is armed to fail.
constexpr std::size_t kDisarmed = std::numeric_limits<std::size_t>::max();
std::atomic<std::size_t> failing_size{kDisarmed};

void* Allocate(std::size_t size) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  std::size_t armed = size;
  if (failing_size.load(std::memory_order_relaxed) == size &&
      failing_size.compare_exchange_strong(armed, kDisarmed)) {
    return nullptr;
  }
  return std::malloc(size == 0 ? 1 : size);
}

void* AllocateOrThrow(std::size_t size) {
  if (void* p = Allocate(size)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace cachet::test {

void CountAllocations(bool on) { counting.store(on); }
bool CountingAllocations() { return counting.load(); }
std::size_t TakeAllocationCount() { return allocations.exchange(0); }
void FailNextAllocationOf(std::size_t size) { failing_size.store(size == 0 ? kDisarmed : size); }

}  // namespace cachet::test

[[gnu::noinline]] void* operator new(std::size_t size) { return AllocateOrThrow(size); }
[[gnu::noinline]] void* operator new[](std::size_t size) { return AllocateOrThrow(size); }
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size);
}
[[gnu::noinline]] void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size);
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
