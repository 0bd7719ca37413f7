// FakeBackend: the in-memory Backend the unit tests of the core share (Cache,
// Batch, the envelope, metrics, GetOrCompute), for tests that need a store that
// does what it is told, remembers what it was asked, and fails on request.
//
// It keeps items in a map with memcached's semantics: add, replace, append,
// prepend and cas preconditions; counters on decimal text (incr wraps at 2^64,
// decr stops at 0); a CAS token from a counter bumped on every write. Options
// choose the name and the capabilities it declares, whether it keeps flags (a
// store without native flags stores 0), whether items expire after their TTL,
// and whether keys follow memcached's rule (no space or control character).
// FailWith() makes every call answer a given Status until Recover().
//
// Thread-safe: one mutex guards everything, so tests may call it from threads.
// A test whose store does something else (wraps the memory plugin, reports
// invalidations) writes its own Backend, or derives from this one.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/backend.h"

namespace cachet::test {

class FakeBackend : public Backend {
 public:
  struct Options {
    std::string name = "fake";
    Capabilities capabilities;
    bool keep_flags = true;       // false: items are stored with flags 0
    bool expire = false;          // true: an item with a TTL is gone once it elapsed
    bool memcached_keys = false;  // true: a key with a space or control byte is invalid

    // The defaults under another name.
    static Options Named(std::string name) {
      Options options;
      options.name = std::move(name);
      return options;
    }
  };

  FakeBackend();
  explicit FakeBackend(Options options);

  std::string_view name() const noexcept override { return options_.name; }
  Capabilities capabilities() const noexcept override { return options_.capabilities; }

  Status Get(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Touch(std::string_view key, Ttl ttl) override;
  Status Flush() override;
  Status Stats(StatsMap* out) override;
  // Counts the call and the batch's size, then runs it one operation at a time.
  void Execute(std::span<Operation> batch) override;

  // Every call answers `status` until Recover().
  void FailWith(Status status);
  void Recover();

  // What is stored, without going through the Backend interface.
  bool Has(const std::string& key);
  std::string Raw(const std::string& key);  // the value bytes; "" when absent
  Item Stored(const std::string& key);      // the item; an empty Item when absent
  void Put(const std::string& key, Item item);
  void Put(const std::string& key, std::string value, std::uint32_t flags = 0);

  // What the store was asked.
  std::vector<std::string> keys_seen();  // every key of every keyed call, in order
  std::vector<std::size_t> batch_sizes();  // the size of each Execute's batch
  int execute_calls();
  int gets();                          // Get calls, hits and misses
  int misses(const std::string& key);  // Get calls that missed `key`
  Ttl last_ttl();                      // of the last Store; Ttl{-1} before any
  Ttl LastTtl(const std::string& key);  // of the last Store of `key`; Ttl{-1} if none
  void ResetCounts();                  // forgets what it was asked (not the items)

 private:
  struct Entry {
    Item item;
    Ttl ttl{0};
    std::chrono::steady_clock::time_point expires = std::chrono::steady_clock::time_point::max();
  };
  using Map = std::map<std::string, Entry, std::less<>>;

  // The failure to answer, or the key's own error, or ok (under mutex_).
  Status Admit(std::string_view key);
  // The live entry of `key` (an expired one is dropped first), or end().
  Map::iterator Live(std::string_view key);
  Status Count(std::string_view key, std::uint64_t delta, bool incr, std::uint64_t* value);
  void SetExpiry(Entry* entry, Ttl ttl) const;

  const Options options_;
  std::mutex mutex_;
  Map items_;
  std::uint64_t next_cas_ = 0;
  std::optional<Status> failure_;
  std::vector<std::string> keys_seen_;
  std::vector<std::size_t> batch_sizes_;
  std::map<std::string, int, std::less<>> misses_;
  std::map<std::string, Ttl, std::less<>> ttls_;
  Ttl last_ttl_{-1};
  int execute_calls_ = 0;
  int gets_ = 0;
};

}  // namespace cachet::test
