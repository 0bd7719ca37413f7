// Allocation hooks for tests: a test executable that links cachet_allocation_hooks
// has the global operator new family replaced (allocation_hooks.cpp), so a test
// can count the allocations a path makes, or make one allocation fail as if
// memory ran out.
#pragma once

#include <cstddef>

namespace cachet::test {

// Counts every allocation, of any thread, while on.
void CountAllocations(bool on);
bool CountingAllocations();
// The allocations counted since the last call.
std::size_t TakeAllocationCount();
// The next allocation of exactly `size` bytes fails (new throws std::bad_alloc,
// the nothrow forms return null); 0 disarms it (0-byte allocations never fail).
void FailNextAllocationOf(std::size_t size);

}  // namespace cachet::test
