// EntryTable: insertion, removal, rebuilding and the clock of the open-addressed table.
#include "entry_table.h"

#include <functional>
#include <new>

namespace cachet::memory {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

EntryTable::SlotArray* EntryTable::SlotArray::Create(std::size_t count) noexcept {
  auto* array = new (std::nothrow) SlotArray;
  if (array == nullptr) return nullptr;
  void* room = ::operator new[](count * sizeof(Slot), kSlotAlignment, std::nothrow);
  if (room == nullptr) {
    delete array;
    return nullptr;
  }
  auto* slots = static_cast<Slot*>(room);
  for (std::size_t i = 0; i < count; ++i) new (&slots[i]) Slot(kEmpty);  // every slot empty
  array->slots.reset(slots);
  array->count = count;
  return array;
}

std::uint64_t EntryTable::HashOf(const MemoryEntry* entry) noexcept {
  // The store's hash (MemoryStore::Locate); recomputed only when the array is
  // rebuilt and for TinyLFU's victim, so no entry stores it.
  return std::hash<std::string_view>{}(entry->key());
}

EntryTable::EntryTable() {
  SlotArray* array = SlotArray::Create(kInitialSlots);
  if (array == nullptr) throw std::bad_alloc();
  Publish(array);
}

EntryTable::~EntryTable() {
  // No reader is left when the table goes, so the entries are freed at once.
  SlotArray* array = Current();
  for (std::size_t i = 0; i < array->count; ++i) {
    const std::uint64_t pointer = array->slots[i].load(kRelaxed) & kPointerBits;
    if (pointer != kEmpty && pointer != kTombstone) MemoryEntry::Destroy(EntryOf(pointer));
  }
  delete array;
}

std::size_t EntryTable::IndexOf(std::string_view key, std::uint64_t hash) const noexcept {
  return Probe(hash, [key](std::uint64_t word) {
    const MemoryEntry* entry = EntryOf(word);
    // A writer that finds the key asks the allocator for the entry's charge,
    // which reads the word before the entry: a line of its own when the entry
    // starts one. Fetched now, beside the key's line, not after it.
    __builtin_prefetch(reinterpret_cast<const char*>(entry) - sizeof(std::size_t));
    return entry->key() == key;
  });
}

std::size_t EntryTable::FindInWindow(std::uint64_t hash, std::uint64_t cas) const noexcept {
  return Probe(hash, [cas](std::uint64_t word) {
    return (word & kWindow) != 0 && EntryOf(word)->cas() == cas;
  });
}

bool EntryTable::Insert(MemoryEntry* entry, std::uint64_t hash, Limbo& limbo,
                        bool in_window) noexcept {
  if (!MakeRoom(limbo)) return false;
  SlotArray* array = Current();
  std::size_t i = array->Home(hash);
  // The first free slot of the probe: the key is absent, so a tombstone will do.
  for (;; i = array->Next(i)) {
    const std::uint64_t pointer = array->slots[i].load(kRelaxed) & kPointerBits;
    if (pointer == kEmpty) break;
    if (pointer == kTombstone) {
      --tombstones_;
      break;
    }
  }
  // Publishes the entry, fully built, to readers; release suffices, as nothing
  // is unlinked (the slot was empty or a tombstone).
  array->slots[i].store(reinterpret_cast<std::uint64_t>(entry) | TagOf(hash) | kReferenced |
                            (in_window ? kWindow : 0),
                        std::memory_order_release);
  ++size_;
  return true;
}

MemoryEntry* EntryTable::Remove(std::size_t index) noexcept {
  MemoryEntry* entry = At(index);
  // A tombstone, never empty: a reader probing past this slot must walk on.
  // Release, not sequentially consistent: the limbo's fence (Limbo::Settle)
  // orders the unlink before it reads the epoch, once for several unlinks.
  Current()->slots[index].store(kTombstone, std::memory_order_release);
  --size_;
  ++tombstones_;
  return entry;
}

void EntryTable::Replace(std::size_t index, MemoryEntry* replacement) noexcept {
  Slot& slot = Current()->slots[index];
  const std::uint64_t kept = slot.load(kRelaxed) & (kTagBits | kWindow);
  // Publishes the replacement, fully built, to readers; release, as in Remove.
  slot.store(reinterpret_cast<std::uint64_t>(replacement) | kept | kReferenced,
             std::memory_order_release);
}

RemovedEntries EntryTable::RetireAll(Limbo& limbo) noexcept {
  RemovedEntries removed;
  // Each entry is held as it is retired, to stay held (MemoryEntry::Hold); a
  // write in place that got in just before, after the array was swapped, wrote
  // into an entry the flush then retired: it came before the flush.
  auto retire = [&](MemoryEntry* entry) {
    (void)entry->Hold();
    if (entry->removed()) removed += RemovedEntries::Of(*entry);
    limbo.Retire(entry, entry->charge());
  };
  SlotArray* fresh = SlotArray::Create(kInitialSlots);
  SlotArray* old = Current();
  if (fresh == nullptr) {
    // Out of memory: empty the array in place, leaving tombstones.
    for (std::size_t i = 0; i < old->count; ++i) {
      const std::uint64_t pointer = old->slots[i].load(kRelaxed) & kPointerBits;
      if (pointer == kEmpty || pointer == kTombstone) continue;
      MemoryEntry* entry = EntryOf(pointer);
      old->slots[i].store(kTombstone);
      ++tombstones_;
      retire(entry);
    }
    size_ = 0;
    return removed;
  }
  Publish(fresh);
  for (std::size_t i = 0; i < old->count; ++i) {
    const std::uint64_t pointer = old->slots[i].load(kRelaxed) & kPointerBits;
    if (pointer != kEmpty && pointer != kTombstone) retire(EntryOf(pointer));
  }
  limbo.Retire(old, old->count * sizeof(Slot));
  size_ = 0;
  tombstones_ = 0;
  hand_ = 0;
  return removed;
}

bool EntryTable::MakeRoom(Limbo& limbo) noexcept {
  SlotArray* old = Current();
  const std::size_t slots = old->count;
  if ((size_ + tombstones_ + 1) * 8 <= slots * 7) return true;
  // Grows once live entries pass 5/8, so that a same-size rebuild always frees
  // at least a quarter of the slots for inserts before the next one.
  const std::size_t count = (size_ + 1) * 8 > slots * 5 ? GrownSize(slots) : slots;
  SlotArray* fresh = SlotArray::Create(count);
  if (fresh == nullptr) return size_ + tombstones_ < slots;
  for (std::size_t i = 0; i < old->count; ++i) {
    const std::uint64_t word = old->slots[i].load(kRelaxed);
    const std::uint64_t pointer = word & kPointerBits;
    if (pointer == kEmpty || pointer == kTombstone) continue;
    std::size_t j = fresh->Home(HashOf(EntryOf(word)));
    while (fresh->slots[j].load(kRelaxed) != kEmpty) j = fresh->Next(j);
    fresh->slots[j].store(word, kRelaxed);
  }
  // Publishes the whole new array; the old one stays as it was for its readers.
  Publish(fresh);
  tombstones_ = 0;
  if (hand_ >= fresh->count) hand_ = 0;
  limbo.Retire(old, slots * sizeof(Slot));
  return true;
}

std::size_t EntryTable::NextVictim(const MemoryEntry* keep, std::int64_t now_ms) noexcept {
  SlotArray* array = Current();
  // Two turns at most: the first clears every mark, the second finds an entry.
  for (std::size_t n = 0; n < 2 * array->count; ++n, hand_ = array->Next(hand_)) {
    Slot& slot = array->slots[hand_];
    const std::uint64_t word = slot.load(kRelaxed);
    const std::uint64_t pointer = word & kPointerBits;
    if (pointer == kEmpty || pointer == kTombstone) continue;
    const MemoryEntry* entry = EntryOf(word);
    if (entry == keep || (word & kWindow) != 0) continue;
    if ((word & kReferenced) == 0 || (now_ms != 0 && entry->ExpiredAt(now_ms))) return hand_;
    slot.fetch_and(~kReferenced, kRelaxed);
  }
  return kNone;
}

}  // namespace cachet::memory
