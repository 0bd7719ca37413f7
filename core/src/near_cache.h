// NearCache: the Backend WithNearCache() returns (cachet/near_cache.h).
//
// Entries live in `near_` (a memory store) as one tag byte and the value: 'v'
// for a value, 'm' for a cached miss (tracking only), under the store's key.
//
// Races. Keys hash to one of kStripes stripes, each a mutex and a change
// counter (epoch); a generation counts drops of everything. A read notes its
// stripe's epoch and the generation (a Ticket) before asking the store, and
// keeps what it got only if neither moved, checked and inserted under the
// stripe's lock. A write, and an invalidation, move the epoch under that lock
// once the store has changed, and either put the written value in (only when
// nothing else moved it since the write began) or take the entry out. Dropping
// everything moves the generation, then passes through every stripe's lock
// before it empties the near tier. So an older value never replaces a newer
// one, whichever finishes first. Hits take no lock.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/invalidation.h"
#include "cachet/near_cache.h"
#include "cachet/net/connection.h"
#include "cachet/thread_number.h"

namespace cachet {

class NearCache final : public Backend, private InvalidationListener {
 public:
  // `ttl`: the longest an entry is kept (0: until invalidated, tracking only).
  NearCache(std::shared_ptr<Backend> store, std::shared_ptr<Backend> near, Ttl ttl, bool tracking);
  ~NearCache() override;

  // Tracking: subscribes to the store's invalidations of keys with `prefixes`.
  Status Subscribe(std::span<const std::string> prefixes);

  std::string_view name() const noexcept override { return store_->name(); }
  Capabilities capabilities() const noexcept override { return store_->capabilities(); }

  Status Get(std::string_view key, Item* out) override;
  Status Gets(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Touch(std::string_view key, Ttl ttl) override;
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out) override;
  Status Flush() override;
  Status Stats(StatsMap* out) override;
  void Execute(std::span<Operation> batch) override;
  Status Extension(std::string_view command, std::span<const std::string> args,
                   std::vector<std::string>* reply) override;
  Status LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                  LeaseGrant* grant, std::uint64_t* lease_cas) override;
  Status EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end) override;
  Status Health(std::vector<ServerHealth>* out) const override;  // the store's servers
  Status SubscribeInvalidations(std::span<const std::string> prefixes,
                                InvalidationListener* listener,
                                std::unique_ptr<InvalidationSubscription>* subscription) override;

  NearMetrics metrics() const;
  const Backend& store() const noexcept { return *store_; }
  Backend& store() noexcept { return *store_; }

 private:
  static constexpr std::size_t kStripes = 256;
  struct alignas(64) Stripe {
    std::mutex mutex;
    std::atomic<std::uint64_t> epoch{0};
  };
  // What a call noted before it went to the store.
  struct Ticket {
    std::uint64_t generation = 0;
    std::uint64_t epoch = 0;
    Stripe* stripe = nullptr;
    bool serving = false;                         // entries could be kept when it began
    std::chrono::steady_clock::time_point began;  // when the store was asked
  };

  // A forked child serves nothing near: its copy of the entries gets no
  // invalidations (the tracking threads stay in the parent).
  bool Serving() const noexcept {
    return (!tracking_ || live_.load(std::memory_order_acquire)) && !InForkedChild();
  }
  // True in a child forked after this near cache was made. The child takes none
  // of its locks: a parent thread (applying an invalidation) may have held one
  // at the fork, and in the child nobody would ever release it.
  bool InForkedChild() const noexcept { return net::CurrentProcessId() != owner_pid_; }
  // Whether the store reports changes to `key`: with tracking, a key outside
  // the subscribed prefixes would never be invalidated, so it is never kept.
  bool Kept(std::string_view key) const noexcept;
  Stripe& StripeOf(std::string_view key) noexcept;
  Ticket Note(std::string_view key) noexcept;
  // A near answer to a read: true with *status ok (a value) or not_found (a
  // cached miss), false when the store must be asked.
  bool Lookup(std::string_view key, Item* out, Status* status);
  // After a read from the store: keeps the value (or, with tracking, the miss)
  // if nothing changed the key since `ticket`. `store_ttl`: the TTL the read
  // just gave the item in the store (GetAndTouch), 0 when it set none.
  void AfterRead(std::string_view key, const Ticket& ticket, const Status& status, const Item& item,
                 Ttl store_ttl = Ttl{0});
  // After a write: puts `written` in when the store is known to hold exactly it
  // (a non-null `written`), else drops the entry. `write_ttl`: the store's TTL.
  void AfterWrite(std::string_view key, const Ticket& ticket, const ItemView* written,
                  Ttl write_ttl);
  // How long a value may be kept, counted from when `ticket` asked the store
  // (so ttl_ms bounds staleness however slow the answer); negative: not at
  // all (a record already stale, or the time already spent).
  Ttl EntryTtl(std::string_view value, Ttl write_ttl, const Ticket& ticket) const;
  // REQUIRES: the key's stripe is locked.
  // Whether the near entry `kept` holds `value` with `flags`, tagged `tag`.
  static bool SameEntry(const Item& kept, char tag, std::string_view value, std::uint32_t flags);
  void PutLocked(std::string_view key, char tag, std::string_view value, std::uint32_t flags,
                 Ttl ttl);
  // Takes `key` out, moving its epoch (a write or an invalidation).
  void Drop(std::string_view key);
  // Takes every entry out, adding how many to `dropped` (null: not counted).
  void DropAll(std::atomic<std::uint64_t>* dropped = nullptr);
  // DropAll once net::StreamFaults() moved past stream_faults_seen_ (Lookup).
  void DropAfterStreamFault();
  std::uint64_t EntryCount() const;

  void OnInvalidate(std::span<const std::string_view> keys) noexcept override;
  void OnInvalidateAll() noexcept override;
  void OnTrackingLive(bool live) noexcept override;

  const std::shared_ptr<Backend> store_;
  const std::shared_ptr<Backend> near_;
  const Ttl ttl_;
  const bool tracking_;
  const pid_t owner_pid_ = net::CurrentProcessId();
  std::atomic<bool> live_{false};
  std::atomic<std::uint64_t> generation_{0};
  std::unique_ptr<std::array<Stripe, kStripes>> stripes_;
  // Reads answered near and reads sent to the store, counted per thread (a
  // stripe by thread number) so readers on several threads share no cache line:
  // one shared counter made two threads' near hits slower than one thread's.
  struct alignas(64) ReadCounts {
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
  };
  static constexpr std::size_t kReadStripes = 32;
  ReadCounts& ThreadReadCounts() noexcept {
    return read_counts_[ThreadNumber(ThreadNumbering::kMemoryStores) % kReadStripes];
  }
  void CountHit() noexcept { ThreadReadCounts().hits.fetch_add(1, std::memory_order_relaxed); }
  void CountMisses(std::uint64_t n) noexcept {
    ThreadReadCounts().misses.fetch_add(n, std::memory_order_relaxed);
  }
  std::array<ReadCounts, kReadStripes> read_counts_;
  std::atomic<std::uint64_t> invalidations_{0};
  std::atomic<std::uint64_t> dropped_by_lost_link_{0};
  // net::StreamFaults() when the entries were last dropped for one (Lookup),
  // stored once they are gone, under the mutex.
  std::mutex stream_fault_mutex_;
  std::atomic<std::uint64_t> stream_faults_seen_;
  std::atomic<std::uint64_t> dropped_by_stream_fault_{0};
  std::vector<std::string> prefixes_;  // subscribed (empty: every key)
  // Last: destroyed first, so the store stops calling back before the rest goes.
  std::unique_ptr<InvalidationSubscription> subscription_;
};

// The store behind `backend` when it is a near cache, else `backend`: for a
// read that must see what the store holds, not a near copy (a join's check).
Backend& BehindNearCache(Backend& backend) noexcept;

}  // namespace cachet
