// FailoverLedger: what a memcached pool with failover must undo before a
// server that was dead serves its keys again.
//
// While a server (the owner) is dead, its keys go to other live servers. A
// write there (set, delete, incr...) leaves the owner holding an older value,
// which it would serve once it is back, and leaves a copy on the other server,
// which a later outage of the owner would serve again after newer writes went
// to the owner. The ledger notes, per owner, the keys written elsewhere and the
// servers they went to; before the owner is routed to again, the backend
// deletes those keys on the owner and on those servers (Take, then Settle).
// Past `max_keys` keys per owner it stops noting them: the repair then flushes
// the owner and those servers instead, a miss being acceptable for a cache and
// a stale value not.
//
// Thread-safe: one mutex, taken only while a key is routed around a dead
// server or some owner owes a repair; AnyOwed() is one relaxed load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace cachet::memcached {

class FailoverLedger {
 public:
  // What a repair of one owner must undo.
  struct Debt {
    std::vector<std::string> keys;  // deleted on the owner and on every server moved_to
    std::vector<bool> moved_to;     // servers that took writes of the owner's keys
    bool overflowed = false;        // more keys than noted: flush instead of deleting
  };

  // Whether an owner may be routed to now, and what Take() handed over.
  enum class Claim : std::uint8_t {
    kClear,  // it owes nothing
    kBusy,   // another thread repairs it, or its last repair failed lately
    kTaken,  // *debt is to be undone now, then Settle() called
  };

  FailoverLedger(std::size_t servers, std::size_t max_keys);

  // True while some owner owes a repair.
  bool AnyOwed() const noexcept { return owing_.load(std::memory_order_relaxed) != 0; }

  // A write of `key`, owned by `owner`, goes to `server` instead.
  void Record(std::size_t owner, std::string_view key, std::size_t server);

  // Claims the repair of `owner` at `now_ns` (steady clock).
  Claim Take(std::size_t owner, std::int64_t now_ns, Debt* debt);

  // Ends a repair Take() handed over: repaired, the debt is paid (keys noted
  // meanwhile stay owed); not, it is owed again and the next Take() waits
  // until `retry_at_ns`.
  void Settle(std::size_t owner, bool repaired, Debt debt, std::int64_t retry_at_ns);

 private:
  struct Owner {
    std::unordered_set<std::string> keys;
    std::vector<bool> moved_to;
    bool overflowed = false;
    bool owes = false;
    bool repairing = false;
    std::int64_t retry_at_ns = 0;
  };

  // REQUIRES: mutex_ held.
  void Note(Owner& owner, std::string_view key);
  void MarkOwing(Owner& owner);

  const std::size_t max_keys_;
  std::mutex mutex_;
  std::vector<Owner> owners_;
  std::atomic<std::size_t> owing_{0};  // owners with owes set
};

}  // namespace cachet::memcached
