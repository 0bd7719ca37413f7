// MemoryBackend: the Backend interface over a MemoryStore, the embedded default
// store. Everything is native and in-process; Execute runs a batch one operation
// at a time (the default), which costs nothing here since there is no round trip.
//
// Keys may hold any bytes (nothing goes on a wire) but must be 1 to max_key_size
// bytes long; values above max_item_size are kTooLarge. Thread-safe.
#pragma once

#include <string_view>

#include "cachet/backend.h"
#include "memory_store.h"

namespace cachet::memory {

class MemoryBackend final : public Backend {
 public:
  explicit MemoryBackend(const MemoryStoreOptions& options) : store_(options) {}

  std::string_view name() const noexcept override { return "memory"; }
  Capabilities capabilities() const noexcept override;

  Status Get(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Touch(std::string_view key, Ttl ttl) override;
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out) override;
  Status Flush() override;
  Status Stats(StatsMap* out) override;

  // What the descriptor advertises; capabilities() answers the same.
  static constexpr Capabilities kCapabilities{
      Capability::kNativeTtl, Capability::kCas,      Capability::kAppendPrepend,
      Capability::kTouch,     Capability::kCounters, Capability::kNativeFlags,
      Capability::kFlush,     Capability::kStats,    Capability::kGetAndTouch};

 private:
  Status CheckKey(std::string_view key) const {
    if (key.empty() || key.size() > store_.options().max_key_size) [[unlikely]] {
      return KeyError(key);
    }
    return Status::OK();
  }
  // Why CheckKey refused `key`.
  Status KeyError(std::string_view key) const;
  Status CheckTtl(Ttl ttl) const {
    if (ttl.count() < 0) [[unlikely]] return NegativeTtlError("memory");
    return Status::OK();
  }

  MemoryStore store_;
};

}  // namespace cachet::memory
