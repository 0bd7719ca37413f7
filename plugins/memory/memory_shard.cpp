// MemoryShard: the operations of the memory store on one shard, under its lock.
#include "memory_shard.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <string>

#include "counter_text.h"

namespace cachet::memory {

namespace {

// The absolute expiry of an item written now with `ttl`; 0 when it never expires.
// An expiry past the clock's range is none: the item outlives the process anyway.
// REQUIRES: ttl is not negative (MemoryBackend refuses it).
std::int64_t ExpiryFor(Ttl ttl) {
  if (ttl.count() == 0) return 0;
  const std::int64_t now = SteadyNowMs();
  return ttl.count() > std::numeric_limits<std::int64_t>::max() - now ? 0 : now + ttl.count();
}

// Reading the clock costs more than the lookup, so only entries with a TTL pay it.
bool ExpiredNow(const MemoryEntry& entry) {
  return entry.expiry() != 0 && entry.ExpiredAt(SteadyNowMs());
}

Status OutOfMemory() { return Status::Internal("memory: out of memory"); }

// The keys a shard's sketch tells apart: about two or three times the items its
// budget holds (an item costs well over 64 bytes), so keys that were asked for
// but are not cached are counted too; bounded to 1 MiB of counters per row.
std::size_t SketchKeys(std::size_t capacity_bytes) {
  constexpr std::size_t kMostKeys = std::size_t{1} << 20;
  const std::size_t keys = capacity_bytes / 64;
  return keys < kMostKeys ? keys : kMostKeys;
}

}  // namespace

MemoryShard::MemoryShard(ShardLimits limits, ReadEpochs& epochs)
    : epochs_(epochs), limits_(limits), limbo_(epochs), table_(limbo_) {
  if (limits.policy == EvictionPolicy::kTinyLfu) {
    sketch_ = std::make_unique<FrequencySketch>(SketchKeys(limits.capacity_bytes));
  }
}

std::int64_t SteadyNowMs() noexcept {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status MemoryShard::Get(KeyRef key, Item* out) {
  if (sketch_ != nullptr) sketch_->Record(key.hash);  // hit or miss, the key was wanted
  {
    ReadEpochs::Section section(epochs_);
    const std::uint64_t layout = table_.layout();
    MemoryEntry* entry = table_.Find(key.key, key.hash);
    if (entry != nullptr) {
      if (!ExpiredNow(*entry)) {
        entry->MarkReferenced();
        CopyOut(*entry, out);
        section.CountHit();
        return Status::OK();
      }
    } else if (layout % 2 == 0 && table_.layout() == layout) {
      section.CountMiss();
      return Status::NotFound();
    }
  }
  return GetLocked(key, out);
}

Status MemoryShard::GetLocked(KeyRef key, Item* out) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindForRead(key);
  if (entry == nullptr) return Status::NotFound();
  CopyOut(*entry, out);
  return Status::OK();
}

Status MemoryShard::GetAndTouch(KeyRef key, Ttl ttl, Item* out) {
  std::lock_guard lock(mutex_);
  if (sketch_ != nullptr) sketch_->Record(key.hash);
  MemoryEntry* entry = FindForRead(key);
  if (entry == nullptr) return Status::NotFound();
  entry->set_expiry(ExpiryFor(ttl));
  CopyOut(*entry, out);
  return Status::OK();
}

Status MemoryShard::Store(StoreMode mode, KeyRef key, ItemView item, Ttl ttl) {
  std::lock_guard lock(mutex_);
  if (sketch_ != nullptr) {
    sketch_->AgeIfDue();
    sketch_->Record(key.hash);  // a write is an access too: a write-only cache still admits
  }
  MemoryEntry* entry = FindLive(key);
  switch (mode) {
    case StoreMode::kSet:
      break;
    case StoreMode::kAdd:
      if (entry != nullptr) return Status::NotStored();
      break;
    case StoreMode::kReplace:
      if (entry == nullptr) return Status::NotStored();
      break;
    case StoreMode::kAppend:
    case StoreMode::kPrepend:
      if (entry == nullptr) return Status::NotStored();
      return Concatenate(entry, item.value, mode == StoreMode::kAppend);
    case StoreMode::kCas:
      if (entry == nullptr) return Status::NotFound();
      if (entry->cas != item.cas) return Status::Exists();
      break;
  }
  if (entry == nullptr) return StoreNew(key, item, ttl, /*judged=*/mode != StoreMode::kAdd);
  if (Status s = CheckFits(entry->key_size, item.value.size()); !s.ok()) return s;
  entry = Rewrite(entry, item.value, {}, item.flags, ExpiryFor(ttl));
  if (entry == nullptr) return OutOfMemory();
  EvictOver(entry);
  return Status::OK();
}

Status MemoryShard::Remove(KeyRef key) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) return Status::NotFound();
  Erase(entry);
  return Status::OK();
}

Status MemoryShard::Touch(KeyRef key, Ttl ttl) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) return Status::NotFound();
  entry->set_expiry(ExpiryFor(ttl));
  entry->MarkReferenced();
  return Status::OK();
}

Status MemoryShard::AddToCounter(KeyRef key, std::uint64_t delta, bool increment,
                                 std::uint64_t* value) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) return Status::NotFound();
  std::uint64_t current = 0;
  if (!ParseCounter(entry->value(), &current)) {
    return Status::InvalidArgument(
        "memory: cannot increment or decrement a value that is not an unsigned decimal number");
  }
  const std::uint64_t next = ApplyDelta(current, delta, increment);
  char digits[kCounterDigits];
  if (Rewrite(entry, FormatCounter(next, digits), {}, entry->flags, entry->expiry()) == nullptr) {
    return OutOfMemory();
  }
  *value = next;
  return Status::OK();
}

void MemoryShard::Flush() {
  std::lock_guard lock(mutex_);
  lru_.Clear();
  table_.RetireAll();
  bytes_ = 0;
  payload_bytes_ = 0;
  // A shard may see no write after a flush: give back now what readers allow.
  limbo_.Reclaim(/*keep_spares=*/false);
}

ShardStats MemoryShard::stats() {
  std::lock_guard lock(mutex_);
  limbo_.Reclaim(/*keep_spares=*/true);  // a quiet shard's limbo moves only here
  ShardStats out = counters_;
  out.items = table_.size();
  out.bytes = bytes_;
  out.payload_bytes = payload_bytes_;
  out.sketch_bytes = sketch_ != nullptr ? sketch_->bytes() : 0;
  out.reclaiming_bytes = limbo_.bytes();
  return out;
}

MemoryEntry* MemoryShard::FindLive(KeyRef key) {
  MemoryEntry* entry = table_.Find(key.key, key.hash);
  if (entry != nullptr && ExpiredNow(*entry)) {
    ++counters_.expired;
    Erase(entry);
    return nullptr;
  }
  return entry;
}

MemoryEntry* MemoryShard::FindForRead(KeyRef key) {
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) {
    epochs_.CountMiss();
    return nullptr;
  }
  epochs_.CountHit();
  entry->MarkReferenced();
  return entry;
}

Status MemoryShard::StoreNew(KeyRef key, ItemView item, Ttl ttl, bool judged) {
  if (Status s = CheckFits(key.key.size(), item.value.size()); !s.ok()) return s;
  // Judged before anything is built or published: a refused item is never seen
  // by a reader, evicts nothing and takes no CAS token.
  const std::size_t charge = kEntryOverhead + key.key.size() + item.value.size();
  if (judged && !Admit(key.hash, charge)) {
    ++counters_.rejected;
    return Status::NotStored();
  }
  MemoryEntry* entry = NewEntry(key.hash, key.key, item.value.size());
  if (entry == nullptr) return OutOfMemory();
  if (!item.value.empty()) {
    std::memcpy(entry->value_data(), item.value.data(), item.value.size());
  }
  entry->value_size = item.value.size();
  entry->flags = item.flags;
  entry->cas = next_cas_++;
  entry->set_expiry(ExpiryFor(ttl));
  table_.Insert(entry);
  lru_.PushNewest(entry);
  bytes_ += entry->charge();
  payload_bytes_ += entry->key_size + entry->value_size;
  ++counters_.total_items;
  EvictOver(entry);
  return Status::OK();
}

bool MemoryShard::Admit(std::uint64_t hash, std::size_t charge) {
  if (sketch_ == nullptr || bytes_ + charge <= limits_.capacity_bytes) return true;
  const std::int64_t now_ms = SteadyNowMs();
  // CLOCK's walk up to its first victim: referenced entries get their second
  // chance here, as EvictOver would give it; each entry at most once.
  for (std::size_t budget = table_.size() + 1; budget > 0; --budget) {
    MemoryEntry* victim = lru_.oldest();
    if (victim == nullptr) return true;
    if (victim->ExpiredAt(now_ms)) return true;  // room that costs no one anything
    if (victim->referenced.load(std::memory_order_relaxed)) {
      victim->referenced.store(false, std::memory_order_relaxed);
      lru_.MoveToNewest(victim);
      continue;
    }
    // TinyLFU: the newcomer displaces the victim only if it was asked for more
    // often; on a tie the resident stays (a scan's keys, seen once, never push
    // out the working set).
    return sketch_->Estimate(hash) > sketch_->Estimate(victim->hash);
  }
  return true;
}

MemoryEntry* MemoryShard::NewEntry(std::uint64_t hash, std::string_view key,
                                   std::size_t value_size) {
  if (MemoryEntry* spare = limbo_.TakeSpare(key.size() + value_size)) {
    return MemoryEntry::Recycle(spare, hash, key);
  }
  return MemoryEntry::Create(hash, key, value_size);
}

Status MemoryShard::Concatenate(MemoryEntry* entry, std::string_view bytes, bool after) {
  const std::size_t new_size = entry->value_size + bytes.size();
  if (new_size > limits_.max_item_size) {
    return Status::TooLarge("memory: value would grow to " + std::to_string(new_size) +
                            " bytes, over max_item_size " + std::to_string(limits_.max_item_size));
  }
  if (Status s = CheckFits(entry->key_size, new_size); !s.ok()) return s;
  const std::string_view old = entry->value();
  entry = after ? Rewrite(entry, old, bytes, entry->flags, entry->expiry())
                : Rewrite(entry, bytes, old, entry->flags, entry->expiry());
  if (entry == nullptr) return OutOfMemory();
  EvictOver(entry);
  return Status::OK();
}

MemoryEntry* MemoryShard::Rewrite(MemoryEntry* entry, std::string_view first,
                                  std::string_view second, std::uint32_t flags,
                                  std::int64_t expires_at_ms) {
  const std::size_t size = first.size() + second.size();
  MemoryEntry* fresh = NewEntry(entry->hash, entry->key(), size);
  if (fresh == nullptr) return nullptr;
  // memcpy must not see the null data() of an empty view, even for 0 bytes.
  if (!first.empty()) std::memcpy(fresh->value_data(), first.data(), first.size());
  if (!second.empty()) {
    std::memcpy(fresh->value_data() + first.size(), second.data(), second.size());
  }
  fresh->value_size = size;
  fresh->flags = flags;
  fresh->cas = next_cas_++;
  fresh->set_expiry(expires_at_ms);
  table_.Replace(entry, fresh);
  lru_.Substitute(entry, fresh);
  lru_.MoveToNewest(fresh);
  bytes_ = bytes_ - entry->charge() + fresh->charge();
  payload_bytes_ = payload_bytes_ - (entry->key_size + entry->value_size) + fresh->key_size + size;
  limbo_.Retire(entry);
  return fresh;
}

Status MemoryShard::CheckFits(std::size_t key_size, std::size_t value_size) const {
  const std::size_t charge = kEntryOverhead + key_size + value_size;
  if (charge <= limits_.capacity_bytes) return Status::OK();
  return Status::TooLarge("memory: an item of " + std::to_string(charge) +
                          " bytes exceeds the shard budget of " +
                          std::to_string(limits_.capacity_bytes) + " bytes (raise max_bytes)");
}

void MemoryShard::Erase(MemoryEntry* entry) {
  lru_.Unlink(entry);
  table_.Detach(entry);
  bytes_ -= entry->charge();
  payload_bytes_ -= entry->key_size + entry->value_size;
  limbo_.Retire(entry);
}

void MemoryShard::EvictOver(MemoryEntry* keep) {
  if (bytes_ <= limits_.capacity_bytes) return;
  const std::int64_t now_ms = SteadyNowMs();
  // Each entry is passed over at most once (its second chance), so this ends
  // within two rounds of the list.
  for (std::size_t budget = 2 * table_.size() + 1; budget > 0 && bytes_ > limits_.capacity_bytes;
       --budget) {
    MemoryEntry* victim = lru_.oldest();
    if (victim == nullptr || victim == keep) return;
    const bool expired = victim->ExpiredAt(now_ms);
    if (victim->referenced.load(std::memory_order_relaxed) && !expired) {
      victim->referenced.store(false, std::memory_order_relaxed);
      lru_.MoveToNewest(victim);
      continue;
    }
    ++(expired ? counters_.expired : counters_.evictions);
    Erase(victim);
  }
}

void MemoryShard::CopyOut(const MemoryEntry& entry, Item* out) {
  out->value.assign(entry.value());
  out->flags = entry.flags;
  out->cas = entry.cas;
}

}  // namespace cachet::memory
