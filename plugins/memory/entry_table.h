// EntryTable: the memory store's hash table, and the CLOCK that picks what to evict.
//
// Open addressing with linear probing over one array of 8-byte slots, of any
// size: a key's first slot is its hash scaled to the array (a multiply, not a
// mask), so the array grows by a quarter rather than doubling (see MakeRoom for
// how full that keeps it). A slot holds an entry's pointer (48
// bits), a 15-bit tag from its hash (a probe compares keys only when the tags
// match, so it rarely touches another entry) and the CLOCK mark: set when the
// entry is read or written, cleared when the clock hand passes it, which
// evicts an entry it finds unmarked. So an item
// costs the table one slot and nothing more: no chain link, no LRU links. Bit 1
// of the pointer (entries are 16-byte aligned) marks an entry in TinyLFU's
// admission window (AdmissionWindow): the clock passes those by.
//
// Writers (Insert, Remove, Replace, RetireAll, the clock) hold the shard's lock,
// and hold an entry (MemoryEntry::Hold) before they unlink it.
// Find runs without it, beside a writer: a slot is one atomic word, a slot that
// ever held an entry never becomes empty again in the same array (a removal
// leaves a tombstone), so a probe never stops early, and what writers unlink goes
// to the writing thread's Limbo, not to the allocator. Growing (or sweeping out
// tombstones) builds a new array and publishes it with one store; the old one is
// never changed afterwards and waits in the limbo, so a reader on it sees the
// table as it was just before: a miss is always a miss at some instant of the read.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "limbo.h"
#include "memory_entry.h"

namespace cachet::memory {

class EntryTable {
 public:
  using Slot = std::atomic<std::uint64_t>;
  static constexpr std::size_t kNone = ~std::size_t{0};

  EntryTable();
  ~EntryTable();
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  // Lock-free lookup: the entry under `key`, or nullptr; `*slot` is where it was
  // found, for MarkReferenced.
  MemoryEntry* Find(std::string_view key, std::uint64_t hash, Slot** slot) const noexcept {
    const SlotArray* array = array_.load();
    const std::uint64_t tag = TagOf(hash);
    for (std::size_t i = array->Home(hash), n = 0; n < array->count; i = array->Next(i), ++n) {
      const std::uint64_t word = array->slots[i].load();
      const std::uint64_t pointer = word & kPointerBits;
      if (pointer == kEmpty) return nullptr;
      if ((word & kTagBits) != tag || pointer == kTombstone) continue;
      MemoryEntry* entry = EntryOf(word);
      if (entry->key() == key) {
        *slot = &array->slots[i];
        return entry;
      }
    }
    return nullptr;
  }
  // Starts loading the line of `hash`'s first slot, so that it arrives while the
  // caller enters its read section. Reads only the hint (Publish): a writer may be
  // replacing it, and a stale or mixed pair then only fetches a line in vain, as
  // nothing is read through the address.
  void PrefetchHome(std::uint64_t hash) const noexcept {
    __builtin_prefetch(reinterpret_cast<const void*>(HomeHint(hash)));
  }
  // The address PrefetchHome fetches: `hash`'s first slot in the array the hint
  // names, as a number.
  std::uintptr_t HomeHint(std::uint64_t hash) const noexcept {
    const std::uintptr_t slots = hint_slots_.load(std::memory_order_relaxed);
    const std::uint64_t count = hint_count_.load(std::memory_order_relaxed);
    return slots + SlotArray::HomeIn(hash, count) * sizeof(Slot);
  }
  // `hash`'s first slot in the current array: what HomeHint gives while no
  // writer replaces the array (a test compares the two).
  std::uintptr_t HomeAddress(std::uint64_t hash) const noexcept {
    const SlotArray* array = Current();
    return reinterpret_cast<std::uintptr_t>(&array->slots[array->Home(hash)]);
  }

  // A read marks its slot only when the mark is missing, so readers of a hot
  // entry do not keep writing its cache line. A mark that lands on another entry
  // (the slot changed meanwhile) only blurs the clock.
  static void MarkReferenced(Slot* slot) noexcept {
    if ((slot->load(std::memory_order_relaxed) & kReferenced) == 0) {
      slot->fetch_or(kReferenced, std::memory_order_relaxed);
    }
  }

  // The writer's lookup: the slot index of `key`'s entry, or kNone. Indexes
  // stay valid until the next Insert.
  std::size_t IndexOf(std::string_view key, std::uint64_t hash) const noexcept;
  MemoryEntry* At(std::size_t index) const noexcept { return EntryOf(Word(index)); }
  // For a walk over every slot (indexes 0 to slot_count() - 1): the entry at
  // `index`, or nullptr for an empty slot or a tombstone.
  std::size_t slot_count() const noexcept { return Current()->count; }
  MemoryEntry* EntryAt(std::size_t index) const noexcept {
    const std::uint64_t pointer = Word(index) & kPointerBits;
    return pointer == kEmpty || pointer == kTombstone ? nullptr : EntryOf(pointer);
  }
  void MarkAt(std::size_t index) noexcept { MarkReferenced(&Current()->slots[index]); }

  // Takes ownership, marked as referenced, and in the admission window if
  // `in_window`. REQUIRES: no entry with the same key is present. May rebuild
  // the array (the old one goes to `limbo`): every index taken before is stale.
  // false, and nothing changed, only when memory ran out with the array full.
  bool Insert(MemoryEntry* entry, std::uint64_t hash, Limbo& limbo,
              bool in_window = false) noexcept;
  // Unlinks the entry at `index` and gives its ownership back to the caller, who
  // must retire it rather than free it.
  MemoryEntry* Remove(std::size_t index) noexcept;
  // Puts `replacement` (same key), marked, in place of the entry at `index`
  // (in the window if that one was), which the caller then owns and must retire.
  void Replace(std::size_t index, MemoryEntry* replacement) noexcept;
  // Unlinks every entry and retires it and the array to `limbo`; starts over
  // small. Returns those of them that were removed in place.
  RemovedEntries RetireAll(Limbo& limbo) noexcept;

  // The clock: moves the hand on, clearing the marks it passes (each a second
  // chance), to the first unmarked entry other than `keep` and outside the
  // admission window, and returns its index (the hand stays on it); an expired
  // entry is taken even if marked when `now_ms` is not 0. kNone when there is no
  // such entry.
  std::size_t NextVictim(const MemoryEntry* keep, std::int64_t now_ms) noexcept;

  // The admission window's mark (see AdmissionWindow).
  bool InWindow(std::size_t index) const noexcept { return (Word(index) & kWindow) != 0; }
  // Moves the entry at `index` out of the window, into the main space.
  void LeaveWindow(std::size_t index) noexcept {
    Current()->slots[index].fetch_and(~kWindow, std::memory_order_relaxed);
  }
  // The slot of the window entry whose key has `hash` and whose CAS is `cas`, or
  // kNone (it left the window, or was rewritten, removed or evicted).
  std::size_t FindInWindow(std::uint64_t hash, std::uint64_t cas) const noexcept;

  // The store's hash of the entry's key (MemoryStore::Locate), computed again:
  // no entry stores it.
  static std::uint64_t HashOf(const MemoryEntry* entry) noexcept;

  std::size_t size() const noexcept { return size_; }
  // The slot array's bytes (charged to the shard's budget).
  std::size_t bytes() const noexcept { return Current()->count * sizeof(Slot); }

 private:
  static constexpr std::uint64_t kPointerBits = (std::uint64_t{1} << 48) - 1;
  static constexpr std::uint64_t kTagBits = (std::uint64_t{0x7FFF}) << 48;
  static constexpr std::uint64_t kReferenced = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kTombstone = 1;  // entries are 16-byte aligned: never 1
  static constexpr std::uint64_t kWindow = 2;     // in the admission window: bit 1 of the pointer
  // Small, so that many shards cost little while empty; the array grows as it fills.
  static constexpr std::size_t kInitialSlots = 64;

  // Slots start a cache line, so no line holds two shards' slots: two threads
  // writing keys of neighbouring shards would otherwise take it from each other.
  static constexpr std::align_val_t kSlotAlignment{64};
  struct FreeSlots {
    void operator()(Slot* slots) const noexcept { ::operator delete[](slots, kSlotAlignment); }
  };

  struct SlotArray final : RetiredArray {
    std::size_t count = 0;  // slots; fewer than 2^32, as Home scales 32 bits of the hash
    std::unique_ptr<Slot[], FreeSlots> slots;

    // nullptr when memory runs out.
    static SlotArray* Create(std::size_t count) noexcept;
    // Where `hash`'s probe starts: its low 32 bits scaled to the slot count (the
    // shard was picked by the top bits, the tag by bits 32..46).
    std::size_t Home(std::uint64_t hash) const noexcept { return HomeIn(hash, count); }
    static std::size_t HomeIn(std::uint64_t hash, std::uint64_t count) noexcept {
      return static_cast<std::size_t>(((hash & 0xFFFFFFFF) * count) >> 32);
    }
    // The slot after `i`, wrapping at the end.
    std::size_t Next(std::size_t i) const noexcept { return i + 1 == count ? 0 : i + 1; }
  };

  // The writers' probe (IndexOf, FindInWindow): walks `hash`'s probe sequence to
  // the first entry whose tag matches and whose slot word `match` accepts, or
  // kNone at the first empty slot. Find keeps its own loop: the readers' path.
  template <class Match>
  std::size_t Probe(std::uint64_t hash, Match match) const noexcept {
    const SlotArray* array = Current();
    const std::uint64_t tag = TagOf(hash);
    for (std::size_t i = array->Home(hash), n = 0; n < array->count; i = array->Next(i), ++n) {
      const std::uint64_t word = array->slots[i].load(std::memory_order_relaxed);
      const std::uint64_t pointer = word & kPointerBits;
      if (pointer == kEmpty) break;
      if ((word & kTagBits) == tag && pointer != kTombstone && match(word)) return i;
    }
    return kNone;
  }

  // Bits 32..46 of the hash: the shard was picked by the top bits and the slot by
  // the low 32, so these still tell the keys of one shard apart.
  static std::uint64_t TagOf(std::uint64_t hash) noexcept { return ((hash >> 32) & 0x7FFF) << 48; }

  // The entry of a slot word that holds one (neither empty nor a tombstone).
  static MemoryEntry* EntryOf(std::uint64_t word) noexcept {
    return reinterpret_cast<MemoryEntry*>(word & kPointerBits & ~kWindow);
  }

  SlotArray* Current() const noexcept { return array_.load(std::memory_order_relaxed); }
  // Makes `array` the table's, for readers from now on, and the prefetch hint its address and size.
  void Publish(SlotArray* array) noexcept {
    array_.store(array);
    hint_slots_.store(reinterpret_cast<std::uintptr_t>(array->slots.get()),
                      std::memory_order_relaxed);
    hint_count_.store(array->count, std::memory_order_relaxed);
  }
  std::uint64_t Word(std::size_t index) const noexcept {
    return Current()->slots[index].load(std::memory_order_relaxed);
  }
  // Rebuilds the array before an insert would fill more than 7/8 of it (live
  // entries and tombstones): a quarter larger (GrownSize) when live entries fill
  // more than 5/8, else the same size without its tombstones, which leaves at
  // least a quarter of the slots free for inserts before the next rebuild. From
  // about 1,000 slots on (below, a 64-slot step is more than a quarter) live
  // entries fill 1/2 to 7/8 of the slots, 7/10 to 7/8 while a table only grows.
  // When memory runs out it keeps the old one while it has an empty slot (which
  // every insert needs); false when it has none.
  bool MakeRoom(Limbo& limbo) noexcept;
  // A quarter more than `slots`, rounded up to a whole number of 64-slot steps.
  static std::size_t GrownSize(std::size_t slots) noexcept {
    return (slots + slots / 4 + 63) / 64 * 64;
  }

  std::atomic<SlotArray*> array_;
  // Copies of the array's slot address and count, beside array_ on its line, for
  // PrefetchHome, which may not read the array itself: outside a read section it
  // may be freed at any time. An address kept as a number is never dereferenced.
  std::atomic<std::uintptr_t> hint_slots_{0};
  std::atomic<std::uint64_t> hint_count_{0};
  std::size_t size_ = 0;        // live entries
  std::size_t tombstones_ = 0;  // removed entries' slots not yet reused
  std::size_t hand_ = 0;        // the clock's position
};

}  // namespace cachet::memory
