// MemoryShard: the operations of the memory store on one shard, under its lock.
#include "memory_shard.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "counter_text.h"

namespace cachet::memory {

namespace {

// The absolute expiry of an item written now with `ttl`; 0 when it never expires.
std::int64_t ExpiryFor(Ttl ttl) { return ttl.count() == 0 ? 0 : SteadyNowMs() + ttl.count(); }

Status OutOfMemory() { return Status::Internal("memory: out of memory"); }

}  // namespace

std::int64_t SteadyNowMs() noexcept {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status MemoryShard::Get(KeyRef key, Item* out) {
  // A small value is copied to the stack under the lock and into `out` after it:
  // `out` may need memory, and calling the allocator under the lock kept other
  // threads waiting for as long as malloc took.
  char small[kStackCopy];
  std::size_t small_size = 0;
  {
    std::lock_guard lock(mutex_);
    MemoryEntry* entry = FindLive(key);
    if (entry == nullptr) {
      ++counters_.get_misses;
      return Status::NotFound();
    }
    ++counters_.get_hits;
    entry->referenced = true;
    const std::string_view value = entry->value();
    if (value.size() > sizeof(small) || out->value.capacity() >= value.size()) {
      CopyOut(*entry, out);
      return Status::OK();
    }
    std::memcpy(small, value.data(), value.size());
    small_size = value.size();
    out->flags = entry->flags;
    out->cas = entry->cas;
  }
  out->value.assign(small, small_size);
  return Status::OK();
}

Status MemoryShard::GetAndTouch(KeyRef key, Ttl ttl, Item* out) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) {
    ++counters_.get_misses;
    return Status::NotFound();
  }
  ++counters_.get_hits;
  entry->expires_at_ms = ExpiryFor(ttl);
  entry->referenced = true;
  CopyOut(*entry, out);
  return Status::OK();
}

Status MemoryShard::Store(StoreMode mode, KeyRef key, ItemView item, Ttl ttl) {
  std::lock_guard lock(mutex_);
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
  return entry == nullptr ? StoreNew(key, item, ttl) : Overwrite(entry, item, ttl);
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
  entry->expires_at_ms = ExpiryFor(ttl);
  entry->referenced = true;
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
  entry = SetValue(entry, FormatCounter(next, digits));
  if (entry == nullptr) return OutOfMemory();
  entry->cas = next_cas_++;
  entry->referenced = true;
  *value = next;
  return Status::OK();
}

void MemoryShard::Flush() {
  std::lock_guard lock(mutex_);
  lru_.Clear();
  table_.Clear();
  bytes_ = 0;
}

ShardStats MemoryShard::stats() const {
  std::lock_guard lock(mutex_);
  ShardStats out = counters_;
  out.items = table_.size();
  out.bytes = bytes_;
  return out;
}

MemoryEntry* MemoryShard::FindLive(KeyRef key) {
  MemoryEntry* entry = table_.Find(key.key, key.hash);
  // Reading the clock costs more than the lookup, so only entries with a TTL pay it.
  if (entry != nullptr && entry->expires_at_ms != 0 && entry->ExpiredAt(SteadyNowMs())) {
    ++counters_.expired;
    Erase(entry);
    return nullptr;
  }
  return entry;
}

Status MemoryShard::StoreNew(KeyRef key, ItemView item, Ttl ttl) {
  if (Status s = CheckFits(key.key.size(), item.value.size()); !s.ok()) return s;
  MemoryEntry* entry = MemoryEntry::Create(key.hash, key.key, item.value.size());
  if (entry == nullptr) return OutOfMemory();
  std::memcpy(entry->value_data(), item.value.data(), item.value.size());
  entry->value_size = item.value.size();
  entry->flags = item.flags;
  entry->cas = next_cas_++;
  entry->expires_at_ms = ExpiryFor(ttl);
  table_.Insert(entry);
  lru_.PushNewest(entry);
  bytes_ += entry->charge();
  ++counters_.total_items;
  EvictOver(entry);
  return Status::OK();
}

Status MemoryShard::Overwrite(MemoryEntry* entry, ItemView item, Ttl ttl) {
  if (Status s = CheckFits(entry->key_size, item.value.size()); !s.ok()) return s;
  entry = SetValue(entry, item.value);
  if (entry == nullptr) return OutOfMemory();
  entry->flags = item.flags;
  entry->cas = next_cas_++;
  entry->expires_at_ms = ExpiryFor(ttl);
  entry->referenced = false;
  lru_.MoveToNewest(entry);
  EvictOver(entry);
  return Status::OK();
}

Status MemoryShard::Concatenate(MemoryEntry* entry, std::string_view bytes, bool after) {
  const std::size_t new_size = entry->value_size + bytes.size();
  if (new_size > limits_.max_item_size) {
    return Status::TooLarge("memory: value would grow to " + std::to_string(new_size) +
                            " bytes, over max_item_size " + std::to_string(limits_.max_item_size));
  }
  if (Status s = CheckFits(entry->key_size, new_size); !s.ok()) return s;
  if (new_size > entry->value_capacity()) {
    // Room to spare, so a run of appends moves the value only now and then.
    const std::size_t roomy = std::min(new_size + new_size / 2, limits_.max_item_size);
    entry = Regrow(entry, roomy, /*keep_value=*/true);
    if (entry == nullptr) return OutOfMemory();
  }
  char* value = entry->value_data();
  if (after) {
    std::memcpy(value + entry->value_size, bytes.data(), bytes.size());
  } else {
    std::memmove(value + bytes.size(), value, entry->value_size);
    std::memcpy(value, bytes.data(), bytes.size());
  }
  entry->value_size = new_size;
  entry->cas = next_cas_++;
  lru_.MoveToNewest(entry);
  EvictOver(entry);
  return Status::OK();
}

MemoryEntry* MemoryShard::SetValue(MemoryEntry* entry, std::string_view value) {
  // A value that shrank a lot gives its block back rather than hold the room.
  const bool oversized =
      entry->value_capacity() > 256 && value.size() < entry->value_capacity() / 2;
  if (value.size() > entry->value_capacity() || oversized) {
    MemoryEntry* moved = Regrow(entry, value.size(), /*keep_value=*/false);
    if (moved == nullptr) return nullptr;
    entry = moved;
  }
  std::memmove(entry->value_data(), value.data(), value.size());
  entry->value_size = value.size();
  return entry;
}

MemoryEntry* MemoryShard::Regrow(MemoryEntry* entry, std::size_t value_capacity, bool keep_value) {
  MemoryEntry* moved = MemoryEntry::Create(entry->hash, entry->key(), value_capacity);
  if (moved == nullptr) return nullptr;
  if (keep_value) {
    std::memcpy(moved->value_data(), entry->value_data(), entry->value_size);
    moved->value_size = entry->value_size;
  }
  moved->flags = entry->flags;
  moved->cas = entry->cas;
  moved->expires_at_ms = entry->expires_at_ms;
  moved->referenced = entry->referenced;
  table_.Replace(entry, moved);
  lru_.Substitute(entry, moved);
  bytes_ = bytes_ - entry->charge() + moved->charge();
  MemoryEntry::Destroy(entry);
  return moved;
}

Status MemoryShard::CheckFits(std::size_t key_size, std::size_t value_size) const {
  const std::size_t charge = sizeof(MemoryEntry) + key_size + value_size + 24;
  if (charge <= limits_.capacity_bytes) return Status::OK();
  return Status::TooLarge("memory: an item of " + std::to_string(charge) +
                          " bytes exceeds the shard budget of " +
                          std::to_string(limits_.capacity_bytes) + " bytes (raise max_bytes)");
}

void MemoryShard::Erase(MemoryEntry* entry) {
  lru_.Unlink(entry);
  table_.Detach(entry);
  bytes_ -= entry->charge();
  MemoryEntry::Destroy(entry);
}

void MemoryShard::EvictOver(const MemoryEntry* keep) {
  if (bytes_ <= limits_.capacity_bytes) return;
  const std::int64_t now_ms = SteadyNowMs();
  // Each entry is passed over at most once (its second chance), so this ends
  // within two rounds of the list.
  for (std::size_t budget = 2 * table_.size() + 1; budget > 0 && bytes_ > limits_.capacity_bytes;
       --budget) {
    MemoryEntry* victim = lru_.oldest();
    if (victim == nullptr || victim == keep) return;
    const bool expired = victim->ExpiredAt(now_ms);
    if (victim->referenced && !expired) {
      victim->referenced = false;
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
