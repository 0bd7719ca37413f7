// MemoryShard: the operations of the memory store on one shard, under its lock.
#include "memory_shard.h"

#include <chrono>
#include <utility>

#include "counter_text.h"

namespace cachet::memory {

namespace {

// The absolute expiry of an item written now with `ttl`; 0 when it never expires.
std::int64_t ExpiryFor(Ttl ttl) {
  return ttl.count() == 0 ? 0 : SteadyNowMs() + ttl.count();
}

}  // namespace

std::int64_t SteadyNowMs() noexcept {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status MemoryShard::Get(std::string_view key, Item* out) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) {
    ++counters_.get_misses;
    return Status::NotFound();
  }
  ++counters_.get_hits;
  lru_.MarkUsed(entry);
  CopyOut(*entry, out);
  return Status::OK();
}

Status MemoryShard::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) {
    ++counters_.get_misses;
    return Status::NotFound();
  }
  ++counters_.get_hits;
  entry->expires_at_ms = ExpiryFor(ttl);
  lru_.MarkUsed(entry);
  CopyOut(*entry, out);
  return Status::OK();
}

Status MemoryShard::Store(StoreMode mode, std::string_view key, ItemView item, Ttl ttl) {
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

Status MemoryShard::Remove(std::string_view key) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) return Status::NotFound();
  Erase(entry);
  return Status::OK();
}

Status MemoryShard::Touch(std::string_view key, Ttl ttl) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) return Status::NotFound();
  entry->expires_at_ms = ExpiryFor(ttl);
  lru_.MarkUsed(entry);
  return Status::OK();
}

Status MemoryShard::AddToCounter(std::string_view key, std::uint64_t delta, bool increment,
                                 std::uint64_t* value) {
  std::lock_guard lock(mutex_);
  MemoryEntry* entry = FindLive(key);
  if (entry == nullptr) return Status::NotFound();
  std::uint64_t current = 0;
  if (!ParseCounter(entry->value, &current)) {
    return Status::InvalidArgument(
        "memory: cannot increment or decrement a value that is not an unsigned decimal number");
  }
  const std::uint64_t next = ApplyDelta(current, delta, increment);
  const std::size_t old_charge = entry->charge();
  FormatCounter(next, &entry->value);
  entry->cas = next_cas_++;
  ChargeResize(entry, old_charge);
  lru_.MarkUsed(entry);
  *value = next;
  return Status::OK();
}

void MemoryShard::Flush() {
  std::lock_guard lock(mutex_);
  lru_.Clear();
  entries_.clear();
  bytes_ = 0;
}

ShardStats MemoryShard::stats() const {
  std::lock_guard lock(mutex_);
  ShardStats out = counters_;
  out.items = entries_.size();
  out.bytes = bytes_;
  return out;
}

MemoryEntry* MemoryShard::FindLive(std::string_view key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  MemoryEntry* entry = it->second.get();
  // Reading the clock costs more than the lookup, so only entries with a TTL pay it.
  if (entry->expires_at_ms != 0 && entry->ExpiredAt(SteadyNowMs())) {
    ++counters_.expired;
    Erase(entry);
    return nullptr;
  }
  return entry;
}

Status MemoryShard::StoreNew(std::string_view key, ItemView item, Ttl ttl) {
  const std::size_t charge = key.size() + item.value.size() + kEntryOverhead;
  if (charge > limits_.capacity_bytes) {
    return Status::TooLarge("memory: item of " + std::to_string(charge) +
                            " bytes exceeds the shard budget of " +
                            std::to_string(limits_.capacity_bytes) + " bytes (raise max_bytes)");
  }
  auto entry = std::make_unique<MemoryEntry>();
  entry->key.assign(key);
  entry->value.assign(item.value);
  entry->flags = item.flags;
  entry->cas = next_cas_++;
  entry->expires_at_ms = ExpiryFor(ttl);
  MemoryEntry* raw = entry.get();
  entries_.emplace(std::string_view(raw->key), std::move(entry));
  lru_.PushNewest(raw);
  bytes_ += raw->charge();
  ++counters_.total_items;
  EvictOver(raw);
  return Status::OK();
}

Status MemoryShard::Overwrite(MemoryEntry* entry, ItemView item, Ttl ttl) {
  if (entry->key.size() + item.value.size() + kEntryOverhead > limits_.capacity_bytes) {
    return Status::TooLarge("memory: item exceeds the shard budget (raise max_bytes)");
  }
  const std::size_t old_charge = entry->charge();
  entry->value.assign(item.value);
  entry->flags = item.flags;
  entry->cas = next_cas_++;
  entry->expires_at_ms = ExpiryFor(ttl);
  ChargeResize(entry, old_charge);
  lru_.MarkUsed(entry);
  EvictOver(entry);
  return Status::OK();
}

Status MemoryShard::Concatenate(MemoryEntry* entry, std::string_view bytes, bool after) {
  const std::size_t new_size = entry->value.size() + bytes.size();
  if (new_size > limits_.max_item_size ||
      entry->key.size() + new_size + kEntryOverhead > limits_.capacity_bytes) {
    return Status::TooLarge("memory: value would grow to " + std::to_string(new_size) +
                            " bytes, over max_item_size " +
                            std::to_string(limits_.max_item_size));
  }
  const std::size_t old_charge = entry->charge();
  if (after) {
    entry->value.append(bytes);
  } else {
    entry->value.insert(0, bytes);
  }
  entry->cas = next_cas_++;
  ChargeResize(entry, old_charge);
  lru_.MarkUsed(entry);
  EvictOver(entry);
  return Status::OK();
}

void MemoryShard::ChargeResize(MemoryEntry* entry, std::size_t old_charge) {
  bytes_ = bytes_ - old_charge + entry->charge();
}

void MemoryShard::Erase(MemoryEntry* entry) {
  lru_.Unlink(entry);
  bytes_ -= entry->charge();
  // The map's key views entry->key: erase by iterator so nothing reads the key
  // while the entry is being destroyed.
  auto it = entries_.find(std::string_view(entry->key));
  if (it != entries_.end()) entries_.erase(it);
}

void MemoryShard::EvictOver(const MemoryEntry* keep) {
  const std::int64_t now_ms = SteadyNowMs();
  while (bytes_ > limits_.capacity_bytes) {
    MemoryEntry* victim = lru_.oldest();
    if (victim == nullptr || victim == keep) return;
    ++(victim->ExpiredAt(now_ms) ? counters_.expired : counters_.evictions);
    Erase(victim);
  }
}

void MemoryShard::CopyOut(const MemoryEntry& entry, Item* out) {
  out->value.assign(entry.value);
  out->flags = entry.flags;
  out->cas = entry.cas;
}

}  // namespace cachet::memory
