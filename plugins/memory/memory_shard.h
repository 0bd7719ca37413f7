// MemoryShard: one lock's worth of the memory store: a hash table of entries
// with its CLOCK and a byte budget. What a write unlinks goes to the writing
// thread's limbo (WriterLanes), not the shard's, and its CAS token comes from
// that thread's lane.
//
// Writers take the shard's lock for their whole duration, so writes are atomic
// with respect to each other, except one kind: under LRU, a set, replace, cas or
// counter step whose value keeps the entry's size rewrites the entry in place
// holding only that entry (OverwriteUnlocked), and every writer under the lock
// holds an entry before it changes, reads or unlinks it (MemoryEntry::Hold), so
// the two kinds never meet on one entry. Get takes no lock: it reads inside a
// ReadEpochs section; a write publishes a new entry and retires the old one, or
// rewrites the entry in place under the entry's own sequence check
// (MemoryEntry::WriteHeld, ReadInto), so a reader sees an item as it was either
// before or after any write, never half of one. Recency is kept the
// CLOCK way: a read or a write marks its entry's slot in the table (no list
// surgery on the hot path, no links in the entry); eviction walks the slots with
// the clock hand, clears the marks it passes (a second chance) and takes the
// first unmarked entry (EntryTable::NextVictim). Expired
// entries are removed lazily, when an operation finds them or eviction reaches
// them. Keys and values are validated by the caller (MemoryBackend); the shard
// enforces the item size limit that append can reach. What its items cost is
// charged against credit borrowed from the store's ByteBudget: a shard out of
// credit borrows more, else evicts its own victims, else asks other shards to
// give bytes back; one that shrank returns what it no longer needs.
// Nothing here throws: allocation failures come back as Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/item.h"
#include "cachet/status.h"
#include "byte_budget.h"
#include "entry_table.h"
#include "admission_window.h"
#include "frequency_sketch.h"
#include "limbo.h"
#include "memory_entry.h"
#include "read_epochs.h"
#include "write_lock.h"
#include "writer_lanes.h"

namespace cachet::memory {

// Which entries a full shard keeps. kLru: every new item is admitted and the
// CLOCK victim goes. kTinyLfu: a new item enters the admission window, and one
// leaving the window only displaces the CLOCK victim if it was asked for more
// often lately (FrequencySketch); otherwise it goes. Without a window
// (window_percent 0) the new item itself is judged as it arrives.
enum class EvictionPolicy { kLru, kTinyLfu };

struct ShardLimits {
  std::size_t share_bytes = 0;     // max_bytes / shards: sizes the sketch and bounds the spares
  std::size_t max_item_size = 0;   // largest value
  EvictionPolicy policy = EvictionPolicy::kLru;
  std::size_t window_percent = 1;  // TinyLFU's window, in percent of share_bytes (0: none)
  bool expiry_rounds_down = false;  // ExpiryCode: seconds never late, rather than never early
};

struct ShardStats {
  std::uint64_t items = 0;
  std::uint64_t bytes = 0;        // the entries' charge
  std::uint64_t table_bytes = 0;  // the hash tables' slots (charged to the budget too)
  std::uint64_t reclaiming_bytes = 0;  // unlinked, waiting for readers to move on
  std::uint64_t get_hits = 0;          // kept by the store (ReadEpochs), not by shards
  std::uint64_t get_misses = 0;
  std::uint64_t evictions = 0;    // live entries dropped for room
  std::uint64_t expired = 0;      // expired entries reclaimed
  std::uint64_t total_items = 0;  // entries ever created
  std::uint64_t rejected = 0;     // items refused by the admission policy
  std::uint64_t window_bytes = 0;  // the admission window's entries (part of bytes)
  std::uint64_t window_items = 0;
  std::uint64_t payload_bytes = 0;  // keys and values of the live items
  std::uint64_t sketch_bytes = 0;   // the admission policy's frequency sketch
};

// The upper bound of what an entry of these sizes and flags costs the budget:
// header, flags, key, value, the allocator's header word and its rounding to 16 bytes.
inline std::size_t ChargeFor(std::size_t key_size, std::size_t value_size,
                             std::uint32_t flags) noexcept {
  return (sizeof(MemoryEntry) + MemoryEntry::RoomFor(key_size, value_size, flags) +
          sizeof(std::size_t) + 15) &
         ~std::size_t{15};
}

// A key and its hash, computed once by the store and used by the shard's table.
struct KeyRef {
  std::string_view key;
  std::uint64_t hash;
};

// Milliseconds of the steady clock: the memory store's time base for expiry.
std::int64_t SteadyNowMs() noexcept;

class alignas(64) MemoryShard {
 public:
  // `index`: the shard's place among the store's (ByteBudget's notes).
  MemoryShard(ShardLimits limits, ReadEpochs& epochs, ByteBudget& budget, WriterLanes& lanes,
              std::size_t index);
  MemoryShard(const MemoryShard&) = delete;
  MemoryShard& operator=(const MemoryShard&) = delete;

  // Starts loading the line of the key's slot (EntryTable::PrefetchHome).
  void PrefetchSlot(const KeyRef& key) const noexcept { table_.PrefetchHome(key.hash); }
  Status Get(const KeyRef& key, Item* out);
  Status GetAndTouch(const KeyRef& key, Ttl ttl, Item* out);
  Status Store(StoreMode mode, const KeyRef& key, const ItemView& item, Ttl ttl);
  Status Remove(const KeyRef& key);
  Status Touch(const KeyRef& key, Ttl ttl);
  Status AddToCounter(const KeyRef& key, std::uint64_t delta, bool increment, std::uint64_t* value);
  void Flush();
  // The shard's counters. REQUIRES: the caller holds write_lock().
  ShardStats stats() const;
  // The lock every write takes; MemoryStore takes all of them to stop writes.
  WriteLock& write_lock() noexcept { return mutex_; }
  // For ByteBudget::Reclaim, from another shard's writer: unless this shard is
  // locked, evicts until `bytes` of its credit are unused (retiring into that
  // writer's `lane`), and returns all of its unused credit to the budget.
  // Returns how much it gave back.
  std::size_t TryGiveBack(std::size_t bytes, WriterLanes::Held& lane) noexcept;
  // For ByteBudget::ReclaimRemoved: unless this shard is locked (false), unlinks
  // its entries removed in place (retiring into `lane`) and returns its unused credit.
  bool TryGiveBackRemoved(WriterLanes::Held& lane) noexcept;


 private:
  // A write's hold on the shard: its lock, and the writing thread's lane, whose
  // limbo takes what the write unlinks (limbo_, while held).
  class Writing {
   public:
    explicit Writing(MemoryShard& shard) noexcept
        : shard_(shard), lock_(shard.mutex_), lane_(shard.lanes_.Mine()) {
      shard_.limbo_ = &lane_.limbo();
      shard_.lane_ = &lane_;
    }
    ~Writing() {
      shard_.limbo_ = nullptr;
      shard_.lane_ = nullptr;
    }
    Writing(const Writing&) = delete;
    Writing& operator=(const Writing&) = delete;

   private:
    MemoryShard& shard_;
    std::lock_guard<WriteLock> lock_;
    WriterLanes::Held lane_;  // released before the lock
  };

  // An entry, held (MemoryEntry::Hold), its slot in the table and its key's
  // hash, for a writer (valid until the next insert). The entry is released
  // when this goes, unless the writer rewrote it in place (which released it)
  // or unlinked it (it stays held): then it calls Consumed. So every way out,
  // an exception's too, lets the entry go.
  class Found {
   public:
    Found() = default;
    Found(MemoryEntry* held_entry, std::size_t slot_index, std::uint64_t key_hash,
          std::uint64_t stamp) noexcept
        : entry(held_entry), index(slot_index), hash(key_hash), held_(stamp) {}
    Found(Found&& other) noexcept
        : entry(other.entry), index(other.index), hash(other.hash), held_(other.held_) {
      other.entry = nullptr;
    }
    Found(const Found&) = delete;
    Found& operator=(const Found&) = delete;
    Found& operator=(Found&&) = delete;
    ~Found() {
      if (entry != nullptr) entry->Release(held_);
    }

    // The entry's CAS token (its stamp before it was held).
    std::uint64_t cas() const noexcept { return MemoryEntry::CasOf(held_); }
    // The entry was rewritten in place or unlinked: nothing left to release.
    void Consumed() noexcept { entry = nullptr; }

    MemoryEntry* entry = nullptr;
    std::size_t index = EntryTable::kNone;
    std::uint64_t hash = 0;

   private:
    std::uint64_t held_ = 0;
  };
  // Store's way without the shard's lock, under LRU, for a set, replace or cas
  // whose value keeps the size of `key`'s entry: the entry is held alone and
  // rewritten in place. False when this way cannot answer (no such entry, or
  // expired, held by another writer, another size or flags): the caller then
  // takes the lock. Inside a ReadEpochs section, so the entry is not freed.
  bool OverwriteUnlocked(StoreMode mode, const KeyRef& key, const ItemView& item, Ttl ttl,
                         Status* answer);
  // Remove's way without the lock, under LRU: the entry stays linked, marked
  // removed (MemoryEntry::MarkRemoved), for a later set of the same size to
  // take in place, or for the locked way, the CLOCK or a flush to unlink. A
  // miss answers too. False when the entry is held by another writer or expired.
  bool RemoveUnlocked(const KeyRef& key, Status* answer);
  // AddToCounter's way without the lock, as OverwriteUnlocked: when the counter
  // keeps its number of digits.
  bool StepCounterUnlocked(const KeyRef& key, std::uint64_t delta, bool increment,
                           std::uint64_t* value, Status* answer);
  // Whether those three may run: under LRU (TinyLFU's sketch ages and its
  // window names entries under the lock), on a thread with a lane of its own
  // (the shared lane's lock is taken under shard locks, and must not be waited
  // for inside a ReadEpochs section).
  bool MayWriteUnlocked() const noexcept {
    return sketch_ == nullptr && ReadEpochs::ThisThreadSlotIndex() != ReadEpochs::kSharedSlot;
  }
  // Holds `entry`, found without the lock, for those three, with a new CAS
  // token in `*token` (taken first: no one waits for anything while holding an
  // entry). False, the entry untouched, when another writer holds it or it is
  // expired; one removed in place is expired too, unless `revive`.
  bool HoldUnlocked(MemoryEntry* entry, bool revive, std::uint64_t* held, std::uint64_t* token);
  // Returns `why`, a write's refusal as too large; a set's also removes the
  // key's older entry (`found`), as memcached's server does, so the value the
  // set was to replace is not read afterwards as if it were current.
  Status RefuseSet(StoreMode mode, Found& found, Status why);
  // Store's answer to a value over max_item_size (RefuseSet's rule, under the lock).
  Status RefuseLargeValue(StoreMode mode, const KeyRef& key, std::size_t size);
  // Get's way when the lock-free read found an expired entry to remove, or
  // was overtaken by writes in place on every try.
  Status GetLocked(const KeyRef& key, Item* out);
  // The live entry under `key`, held, or none; an expired one is removed on the way.
  Found FindLive(const KeyRef& key);
  // FindLive for a read under the lock: counts the hit or miss and marks the entry.
  Found FindForRead(const KeyRef& key);
  // Stores a new key. With `judged` (every new key but an add's) a full shard
  // under TinyLFU without a window may refuse it: not_stored, and nothing
  // changed but the sketch. With a window, the new key enters the window.
  Status StoreNew(const KeyRef& key, const ItemView& item, Ttl ttl, bool judged);
  // TinyLFU's verdict on a new item of `charge` bytes for the key with `hash`:
  // true when it fits, or when it was asked for more often than the first
  // victim CLOCK would take (which gets its second chances on the way).
  bool Admit(std::uint64_t hash, std::size_t charge);
  // An entry for `key` and `flags` with a value of `value_size` bytes still to
  // be written: a spare from the limbo if one fits, else a new block; its
  // charge() in `*charge`. nullptr when out of memory.
  MemoryEntry* NewEntry(std::string_view key, std::uint32_t flags, std::size_t value_size,
                        std::size_t* charge);
  Status Concatenate(Found& found, std::string_view bytes, bool after);
  // Publishes a new entry for `found`'s key, with the value `first` + `second`,
  // these flags and expiry and a new CAS, in its place, marked as referenced, and
  // retires the old one. nullptr, and the old entry untouched (still held), when
  // out of memory.
  // Each entry's charge() is asked for once here and passed on (the limbo keeps
  // it), as the allocator reads it from the block's header.
  // Rewrite's way for a value of the entry's size (MemoryEntry::RewritableWith),
  // outside an admission window: the same entry takes the new value, flags,
  // expiry and CAS, so nothing is allocated, retired or relinked, and is
  // released. False, and nothing changed (still held), when it cannot take it.
  bool RewriteInPlace(Found& found, std::string_view value, std::uint32_t flags,
                      std::int64_t expires_at_ms);
  MemoryEntry* Rewrite(Found& found, std::string_view first, std::string_view second,
                       std::uint32_t flags, std::int64_t expires_at_ms);
  Status CheckFits(std::size_t key_size, std::size_t value_size, std::uint32_t flags) const;
  // Unlinks and retires the entry at `index`, which the caller holds. One
  // removed in place is uncounted.
  void Erase(std::size_t index);
  // Erase for a Found.
  void Erase(Found& found) {
    Erase(found.index);
    found.Consumed();
  }
  // For ByteBudget, from another shard's writer: unless this shard is locked
  // (nothing then), runs `work` with that writer's `lane` as this shard's, then
  // returns all unused credit to the budget and says how much.
  template <class Work>
  std::optional<std::size_t> GiveBackIfFree(WriterLanes::Held& lane, Work work) noexcept;
  // Unlinks the entries removed in place, when the budget has this shard's
  // note (the whole table is walked: once per note, not per write).
  void SweepRemoved();
  // Makes the credit cover used(): borrows, else unlinks entries removed in
  // place (here, then in other shards), else evicts the entries the clock picks
  // (never `keep`), else asks other shards for bytes.
  void EvictOver(const MemoryEntry* keep) {
    if (used() > credit_) CoverUsage(keep);
  }
  void CoverUsage(const MemoryEntry* keep);
  // Evicts victims (PickVictim), never `keep`, until used() + `room` fits the credit.
  void EvictFor(std::size_t room, const MemoryEntry* keep);
  // The next entry to evict, never `keep`: the CLOCK victim, except that while
  // the admission window holds more than its limit, its oldest entry leaves it
  // and competes with the CLOCK victim (the one asked for less often is the
  // answer, the other stays in the main space). kNone when nothing can go.
  std::size_t PickVictim(const MemoryEntry* keep, std::int64_t now_ms);
  // Takes the window's oldest entry other than `keep` out of the window (into
  // the main space) and returns its slot, with its key's hash in `*hash`; kNone
  // when the window holds no other entry.
  std::size_t LeaveWindow(const MemoryEntry* keep, std::uint64_t* hash);
  // Drops the window's records of entries no longer in it.
  void CompactWindow();
  // Returns credit beyond a chunk of headroom once two chunks lie unused.
  void ReturnSurplus() noexcept {
    if (credit_ > used() + 2 * chunk_) {
      budget_.Return(credit_ - used() - chunk_);
      credit_ = used() + chunk_;
    }
  }
  // Whether TinyLFU's admission window is in use: never without the sketch,
  // which is on the line a write only reads.
  bool windowed() const noexcept { return sketch_ != nullptr && window_.enabled(); }
  // The budget used: the entries and the table's slots.
  std::size_t used() const noexcept { return bytes_ + table_.bytes(); }
  // A new CAS token from the writing thread's lane (while Writing).
  std::uint64_t NextCas() noexcept { return lane_->NextCas(); }

  // Credit is borrowed and returned in steps of this many bytes.
  // At most kChunk, and a 64th of the shard's share: in a small store 16 KiB
  // chunks would let the first shards to grow take the whole budget (a 154 KB
  // store is under ten of them) and leave the others evicting their hot items.
  static constexpr std::size_t kChunk = std::size_t{16} << 10;

  // The shard's lines: the first two (bytes 0-127) are never written after
  // construction; the lock's line holds most of what a locked write changes and
  // the table's array pointer with the prefetch hint, which every lookup reads
  // (keep table_ within it); the next holds the table's counts and the credit,
  // which an insert or a removal changes and a write that changes the charge
  // reads; an eviction (the clock's hand, the counters) changes more. With many
  // shards most lines are out of the caches, and a line another core wrote last
  // comes from that core.
  ReadEpochs& epochs_;  // the store's, shared by its shards
  WriterLanes& lanes_;  // the store's
  ByteBudget& budget_;  // the store's
  const std::unique_ptr<FrequencySketch> sketch_;  // TinyLFU only; nullptr for LRU
  const ShardLimits limits_;
  const std::size_t index_;  // among the store's shards
  alignas(64) WriteLock mutex_;
  Limbo* limbo_ = nullptr;  // the writing thread's (Writing), while mutex_ is held
  WriterLanes::Held* lane_ = nullptr;  // likewise: its CAS tokens
  std::size_t bytes_ = 0;   // the entries' charge()
  std::size_t payload_bytes_ = 0;  // key and value bytes of the live entries
  EntryTable table_;  // its slot array's pointer and the prefetch hint on this line
  std::size_t credit_ = 0;  // bytes borrowed from budget_: used() stays within it
  std::uint64_t total_items_ = 0;  // entries ever created
  const std::size_t chunk_;
  AdmissionWindow window_;  // TinyLFU with a window only; disabled otherwise
  ShardStats counters_;  // evictions, expired, rejected; stats() adds the rest
};

}  // namespace cachet::memory
