// MemoryBackend: argument checks, then the key's shard does the work.
#include "memory_backend.h"

#include <string>

namespace cachet::memory {

Capabilities MemoryBackend::capabilities() const noexcept { return kCapabilities; }

Status MemoryBackend::Get(std::string_view key, Item* out) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.Get(ref, out);
}

Status MemoryBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                            const WriteOptions& options) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  if (Status s = CheckTtl(options.ttl); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.Store(mode, ref, item, options.ttl);  // refuses a value over max_item_size
}

Status MemoryBackend::Remove(std::string_view key) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.Remove(ref);
}

Status MemoryBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.AddToCounter(ref, delta, true, value);
}

Status MemoryBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.AddToCounter(ref, delta, false, value);
}

Status MemoryBackend::Touch(std::string_view key, Ttl ttl) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  if (Status s = CheckTtl(ttl); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.Touch(ref, ttl);
}

Status MemoryBackend::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  if (Status s = CheckKey(key); !s.ok()) return s;
  if (Status s = CheckTtl(ttl); !s.ok()) return s;
  auto [shard, ref] = store_.Locate(key);
  return shard.GetAndTouch(ref, ttl, out);
}

Status MemoryBackend::Flush() {
  store_.Flush();
  return Status::OK();
}

Status MemoryBackend::Stats(StatsMap* out) {
  const ShardStats s = store_.TotalStats();
  const MemoryStoreOptions& o = store_.options();
  *out = {
      {"curr_items", std::to_string(s.items)},
      {"bytes", std::to_string(s.bytes)},
      {"table_bytes", std::to_string(s.table_bytes)},
      {"reclaiming_bytes", std::to_string(s.reclaiming_bytes)},
      {"limit_maxbytes", std::to_string(o.max_bytes)},
      {"get_hits", std::to_string(s.get_hits)},
      {"get_misses", std::to_string(s.get_misses)},
      {"evictions", std::to_string(s.evictions)},
      {"expired", std::to_string(s.expired)},
      {"total_items", std::to_string(s.total_items)},
      {"shards", std::to_string(o.shards)},
      {"policy", o.policy == EvictionPolicy::kTinyLfu ? "tinylfu" : "lru"},
      {"rejected", std::to_string(s.rejected)},
      {"sketch_bytes", std::to_string(s.sketch_bytes)},
      {"window_bytes", std::to_string(s.window_bytes)},
      {"window_items", std::to_string(s.window_items)},
      // What an item costs beyond its key and value: its share of the
      // allocator's chunks and of the table's slots; with no items, the fixed part.
      {"overhead_per_item",
       std::to_string(s.items == 0 ? ChargeFor(0, 0, 0) + sizeof(std::uint64_t)
                                   : (s.bytes + s.table_bytes - s.payload_bytes) / s.items)},
      {"max_item_size", std::to_string(o.max_item_size)},
  };
  return Status::OK();
}

Status MemoryBackend::KeyError(std::string_view key) const {
  if (key.empty()) return Status::InvalidArgument("memory: empty key");
  return Status::InvalidArgument("memory: key of " + std::to_string(key.size()) +
                                 " bytes is over max_key_size " +
                                 std::to_string(store_.options().max_key_size));
}

}  // namespace cachet::memory
