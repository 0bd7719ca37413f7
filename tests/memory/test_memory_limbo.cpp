// The memory store's limbo and its read epochs, white-box (built from the
// plugin's own sources): what a writer retires is freed at once while no reader
// is in, without moving the epoch, and waits for the epoch while one is. Also
// the writers' lanes (each thread's limbo) and the lock that guards them, and
// the entry table's slot prefetch hint, which must follow every array it publishes.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "entry_table.h"
#include "limbo.h"
#include "read_epochs.h"
#include "write_lock.h"
#include "writer_lanes.h"

using cachet::memory::EntryTable;
using cachet::memory::Limbo;
using cachet::memory::MemoryEntry;
using cachet::memory::ReadEpochs;
using cachet::memory::WriteLock;
using cachet::memory::WriterLanes;

namespace {

// Retires one entry under "key" with a value of `value_size` bytes (kept as a
// spare only by a limbo given room for spares).
void RetireOne(Limbo& limbo, std::size_t value_size = 100) {
  MemoryEntry* entry = MemoryEntry::Create("key", 0, value_size);
  REQUIRE(entry != nullptr);
  limbo.Retire(entry, entry->charge());
}

// RetireOne for other threads, which must not use Catch's assertions: false
// when the entry could not be made.
bool TryRetireOne(Limbo& limbo) {
  MemoryEntry* entry = MemoryEntry::Create("key", 0, 100);
  if (entry == nullptr) return false;
  limbo.Retire(entry, entry->charge());
  return true;
}

}  // namespace

TEST_CASE("limbo: with no reader in, every 8th retirement frees all that waits", "[memory]") {
  ReadEpochs epochs;
  Limbo limbo(epochs, /*spare_limit=*/0);
  for (int i = 0; i < 7; ++i) RetireOne(limbo);
  CHECK(limbo.bytes() > 0);
  RetireOne(limbo);
  CHECK(limbo.bytes() == 0);
  // Freed without an epoch advance: the word every writer reads stayed as it was.
  CHECK(epochs.current() == 0);
  for (int i = 0; i < 800; ++i) RetireOne(limbo);
  CHECK(limbo.bytes() == 0);
  CHECK(epochs.current() == 0);
}

TEST_CASE("limbo: a reader in keeps what was retired, until the epoch lets it go", "[memory]") {
  ReadEpochs epochs;
  Limbo limbo(epochs, /*spare_limit=*/0);
  CHECK(epochs.NoReaders());
  {
    ReadEpochs::Section reader(epochs);
    CHECK_FALSE(epochs.NoReaders());
    for (int i = 0; i < 64; ++i) RetireOne(limbo);
    // The reader may hold any of them: none is freed, however many follow.
    CHECK(limbo.bytes() >= 64 * 100);
  }
  CHECK(epochs.NoReaders());
  for (int i = 0; i < 8; ++i) RetireOne(limbo);
  CHECK(limbo.bytes() == 0);
}

TEST_CASE("limbo: a reader announced in the other parity is seen too", "[memory]") {
  ReadEpochs epochs;
  REQUIRE(epochs.TryAdvance());  // epoch 1: a reader now counts in the odd parity
  Limbo limbo(epochs, /*spare_limit=*/0);
  ReadEpochs::Section reader(epochs);
  CHECK_FALSE(epochs.NoReaders());
  for (int i = 0; i < 16; ++i) RetireOne(limbo);
  CHECK(limbo.bytes() >= 16 * 100);
}

TEST_CASE("limbo: spares of a size no write asks for any more give way to the newest", "[memory]") {
  ReadEpochs epochs;
  Limbo limbo(epochs, /*spare_limit=*/std::size_t{1} << 20);
  // Writes of 100-byte values fill the spares with entries of that size.
  for (int i = 0; i < 128; ++i) RetireOne(limbo, 100);
  const std::size_t full = limbo.bytes();
  std::size_t charge = 0;
  const std::size_t small_room = MemoryEntry::RoomFor(3, 10, 0);
  CHECK(limbo.TakeSpare(small_room, &charge) == nullptr);
  // The values shrink to 10 bytes: their freed entries take the spares' places.
  for (int i = 0; i < 128; ++i) RetireOne(limbo, 10);
  CHECK(limbo.bytes() < full);
  MemoryEntry* spare = limbo.TakeSpare(small_room, &charge);
  REQUIRE(spare != nullptr);
  CHECK(MemoryEntry::CapacityOf(charge) >= small_room);
  MemoryEntry::Destroy(spare);
  // No spare of the old size is left.
  CHECK(limbo.TakeSpare(MemoryEntry::RoomFor(3, 100, 0), &charge) == nullptr);
}

TEST_CASE("write lock: one holder at a time, try_lock refuses while held", "[memory]") {
  WriteLock lock;
  lock.lock();
  CHECK_FALSE(lock.try_lock());
  lock.unlock();
  REQUIRE(lock.try_lock());
  lock.unlock();

  // Four threads (more than this machine's cores, so holders get descheduled and
  // waiters yield) add to a plain counter under the lock: no addition is lost.
  constexpr int kThreads = 4;
  constexpr int kAdds = 100000;
  std::uint64_t counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAdds; ++i) {
        lock.lock();
        ++counter;
        lock.unlock();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(counter == std::uint64_t{kThreads} * kAdds);
}

TEST_CASE("writer lanes: what a thread retired is reclaimed from another thread", "[memory]") {
  ReadEpochs epochs;
  WriterLanes lanes(epochs, /*spare_limit=*/0);
  // A thread retires 7 entries (one short of the limbo's look for readers), so
  // they wait in its lane after it ended.
  std::thread writer([&] {
    WriterLanes::Held lane = lanes.Mine();
    for (int i = 0; i < 7; ++i) (void)TryRetireOne(lane.limbo());
  });
  writer.join();
  CHECK(lanes.bytes() >= 7 * 100);
  lanes.Reclaim(/*keep_spares=*/false);
  CHECK(lanes.bytes() == 0);
}

TEST_CASE("writer lanes: threads beyond the lanes share them safely", "[memory][threads]") {
  ReadEpochs epochs;
  WriterLanes lanes(epochs, /*spare_limit=*/std::size_t{64} << 10);
  // Twice as many threads as lanes retire and take spares at once; a lane held
  // by two threads at a time would corrupt its ring (ASan and TSan see it).
  // All are alive before any starts (the latch), so their slots repeat.
  constexpr int kThreads = 2 * static_cast<int>(ReadEpochs::kSlots);
  std::atomic<int> retired{0};
  std::latch all_alive(kThreads);
  std::vector<std::size_t> slots(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      slots[t] = ReadEpochs::ThisThreadSlotIndex();
      all_alive.arrive_and_wait();
      for (int i = 0; i < 200; ++i) {
        WriterLanes::Held lane = lanes.Mine();
        std::size_t charge = 0;
        MemoryEntry* spare = lane.limbo().TakeSpare(MemoryEntry::RoomFor(3, 100, 0), &charge);
        if (spare != nullptr) MemoryEntry::Destroy(spare);
        if (TryRetireOne(lane.limbo())) ++retired;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  // Every owned slot, and the shared one for the threads numbered beyond them.
  const std::set<std::size_t> distinct(slots.begin(), slots.end());
  CHECK(distinct.size() >= ReadEpochs::kSlots);
  CHECK(distinct.count(ReadEpochs::kSharedSlot) == 1);
  CHECK(retired.load() == kThreads * 200);
  lanes.Reclaim(/*keep_spares=*/false);
  CHECK(lanes.bytes() == 0);
}

TEST_CASE("threads that end give their slot to the next thread", "[memory][threads]") {
  // One after the other, 100 threads each take a slot (and so a writer lane) and
  // end: each gets the same lowest free slot, so threads that come and go never
  // push two live threads onto one lane.
  const std::size_t mine = ReadEpochs::ThisThreadSlotIndex();
  std::vector<std::size_t> taken;
  for (int i = 0; i < 100; ++i) {
    std::size_t slot = 0;
    std::thread thread([&slot] { slot = ReadEpochs::ThisThreadSlotIndex(); });
    thread.join();
    taken.push_back(slot);
  }
  for (const std::size_t slot : taken) {
    CHECK(slot == taken.front());
    CHECK(slot != mine);
  }
}

TEST_CASE("entry table: the slot prefetch hint follows the array as it grows and is flushed",
          "[memory]") {
  ReadEpochs epochs;
  Limbo limbo(epochs, /*spare_limit=*/0);
  EntryTable table;
  const std::uint64_t probes[] = {0, 1, 0xFFFFFFFF, 0x123456789ABCDEF0, ~std::uint64_t{0}};
  auto hint_follows = [&] {
    for (const std::uint64_t hash : probes) {
      if (table.HomeHint(hash) != table.HomeAddress(hash)) return false;
    }
    return true;
  };
  CHECK(hint_follows());
  const std::size_t first_slots = table.slot_count();
  for (int i = 0; i < 2000; ++i) {
    const std::string key = "key" + std::to_string(i);
    MemoryEntry* entry = MemoryEntry::Create(key, 0, 8);
    REQUIRE(entry != nullptr);
    entry->set_cas(static_cast<std::uint64_t>(i) + 1);  // published entries have one (not held)
    REQUIRE(table.Insert(entry, EntryTable::HashOf(entry), limbo));
  }
  CHECK(table.slot_count() > first_slots);  // rebuilt larger, more than once
  CHECK(hint_follows());
  (void)table.RetireAll(limbo);
  CHECK(table.slot_count() == first_slots);  // started over small
  CHECK(hint_follows());
}
