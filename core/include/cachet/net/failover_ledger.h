// FailoverLedger: what a pool with failover must undo before a
// server that was dead serves its keys again.
//
// While a server (the owner) is dead, its keys go to other live servers. A
// write there (set, delete, incr...) leaves the owner holding an older value,
// which it would serve once it is back, and leaves a copy on the other server,
// which a later outage of the owner would serve again after newer writes went
// to the owner. The ledger notes, per owner, the keys written elsewhere and the
// servers they went to; before the owner is routed to again, Failover (failover.h)
// deletes those keys on the owner and on those servers (Take, then Settle).
// A server that could not be reached then keeps its copies: the owner is
// routed to again, and that server is marked stale for the owner's keys until
// a later repair reaches it (TakeStale before it stands in for the owner).
// Past `max_keys` keys per owner it stops noting them: the repair then flushes
// the owner and those servers instead, a miss being acceptable for a cache and
// a stale value not.
// With three or more servers the servers standing in for an owner may change
// during one outage (the first stand-in fails too, then comes back): for each
// noted key the ledger keeps the server its last write went to (LastServer), so
// the key is served from there, and an older copy on another stand-in is not.
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
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cachet/export.h"

namespace cachet::net {

class CACHET_EXPORT FailoverLedger {
 public:
  // What a repair of one owner must undo.
  struct Debt {
    std::vector<std::string> keys;  // deleted on every server the repair reaches
    // Where each noted key's last write went (a copy, with the owner's repair).
    std::unordered_map<std::string, std::size_t> last_server;
    std::vector<bool> moved_to;     // servers that took writes since the owner was last repaired
    std::vector<bool> stale_on;     // servers that kept copies past the owner's last repair
    bool overflowed = false;        // more keys than noted: flush instead of deleting

    // Whether the owner itself must be repaired before it is routed to.
    bool OwnerOwes() const;
  };

  // Whether an owner (or a server standing in for it) may be used now, and
  // what the Take call handed over.
  enum class Claim : std::uint8_t {
    kClear,  // it owes nothing that stands in the way
    kBusy,   // another thread repairs it, or its last repair failed lately
    kTaken,  // *debt is to be undone now, then Settle() called
  };

  FailoverLedger(std::size_t servers, std::size_t max_keys);

  // True while some owner owes a repair.
  bool AnyOwed() const noexcept { return owing_.load(std::memory_order_relaxed) != 0; }

  // A write of `key`, owned by `owner`, goes to `server` instead: `routed` when
  // it is being routed there (the key's last server from now on), not when its
  // exchange is over (a later write may have gone elsewhere meanwhile).
  void Record(std::size_t owner, std::string_view key, std::size_t server, bool routed);

  // The server the last write of `key` around `owner` went to, since the owner
  // last served; false when none is noted (or too many keys were to note).
  bool LastServer(std::size_t owner, std::string_view key, std::size_t* server);

  // Claims the repair of `owner` at `now_ns` (steady clock), before it is
  // routed to. An owner that owes nothing itself (only stale servers) is
  // kClear unless that repair is due.
  Claim Take(std::size_t owner, std::int64_t now_ns, Debt* debt);

  // Claims the repair of `server`'s stale copies of `owner`'s keys, before
  // `server` stands in for `owner`: kClear if it holds none.
  Claim TakeStale(std::size_t owner, std::size_t server, Debt* debt);

  // Ends a repair a Take call handed over; `cleaned[s]` says whether server
  // `s` was reached and its deletes (or flush) succeeded. What was not undone
  // is owed again, and the next Take() waits until `retry_at_ns`; keys noted
  // meanwhile stay owed. Returns whether the owner may be routed to.
  bool Settle(std::size_t owner, Debt debt, const std::vector<bool>& cleaned,
              std::int64_t retry_at_ns);

 private:
  struct Owner {
    std::unordered_set<std::string> keys;
    std::unordered_map<std::string, std::size_t> last_server;  // bounded like keys
    std::vector<bool> moved_to;
    std::vector<bool> stale_on;  // kept while repaired, cleared by Settle
    bool overflowed = false;
    bool owes = false;
    bool repairing = false;
    bool repairing_owner = false;  // the repair under way includes the owner
    std::int64_t retry_at_ns = 0;
  };

  // REQUIRES: mutex_ held.
  void Note(Owner& owner, std::string_view key);
  void MarkOwing(Owner& owner);
  // Hands the keys over to a repair, with the servers that took them if
  // `with_owner` (the owner is repaired too), and the stale ones.
  void HandOver(Owner& owner, bool with_owner, Debt* debt);

  const std::size_t max_keys_;
  std::mutex mutex_;
  std::vector<Owner> owners_;
  std::atomic<std::size_t> owing_{0};  // owners with owes set
};

}  // namespace cachet::net
