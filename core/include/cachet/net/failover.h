// Failover: the rule of a network store whose keys may go to another server
// while their own is dead (`failover = true`): route them around it, note the
// writes that went elsewhere, and before the dead server (the key's owner)
// serves its keys again, delete what those writes left behind, on it and on
// the servers that took them (FailoverLedger keeps the notes). A read then
// returns the last value written for its key, or a miss, never an older copy
// an outage left on a server, even when the server kept its data (a paused
// memcached, any Tokyo Tyrant).
//
// A store makes one when failover is on and its pool has more than one server,
// and asks it about every operation the pool routed elsewhere than its home,
// or every operation while some owner owes a repair (Concerns: one load and
// compare otherwise). The store gives it the two things only it knows: how to
// fill a batch of deletes for a server, and how to empty a server (for an owner
// around which more keys went than `max_keys` could note).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cachet/backend.h"
#include "cachet/export.h"
#include "cachet/net/batch_runner.h"
#include "cachet/net/failover_ledger.h"
#include "cachet/net/server_pool.h"

namespace cachet::net {

class CACHET_EXPORT Failover {
 public:
  // The store's batch of `ops` for `server`, made in `slot`, as
  // BatchRunner::EnlistGroups fills one; the repair's deletes go out in it.
  using FillBatch = std::function<ServerBatch*(std::size_t server, std::span<Operation* const> ops,
                                               std::unique_ptr<ServerBatch>& slot)>;
  // Empties each of `servers` (memcached's flush_all, Tokyo Tyrant's vanish),
  // setting (*cleaned)[s] for each one emptied.
  using FlushServers =
      std::function<void(std::span<const std::size_t> servers, std::vector<bool>* cleaned)>;

  Failover(ServerPool& pool, std::size_t max_keys, FillBatch fill, FlushServers flush);
  // A Failover for `pool` when its options ask for one (`failover`, with more
  // than one server), with their failover_max_keys; else null.
  static std::unique_ptr<Failover> IfEnabled(ServerPool& pool, FillBatch fill,
                                             FlushServers flush);

  // Whether Route() must see an operation the pool routed to `server`, whose
  // own server is `home`.
  bool Concerns(std::size_t server, std::size_t home) const noexcept {
    return server != home || ledger_.AnyOwed();
  }
  // Where `op` goes, given its `home` and the pool's route `*server`: `home`
  // only once it is repaired, else around it, to where the key's last write
  // went; a write around `home` is noted before it is sent. False (op.status
  // says why) if it can go nowhere now.
  // The first route to a server back from an outage runs its repair first, in
  // this call: deletes (or empties) on several servers, within one call's
  // deadline, through the store's callbacks, each on a runner of its own (so a
  // store may route while its thread's runner holds a batch being filled; the
  // callbacks must not use that runner). May throw std::bad_alloc; the repair
  // is then tried again after retry_timeout.
  bool Route(Operation& op, std::size_t home, std::size_t* server);
  // Notes again, once its exchange is over, a write that went to `server`
  // rather than its `home`: a repair that started while it was in flight may
  // have deleted the key there before the write arrived.
  void NoteWriteAround(const Operation& op, std::size_t home, std::size_t server);

  // A batch's operations that went around their home server, to be noted
  // again once the batch has run (NoteWritesAround).
  struct Around {
    const Operation* op;
    std::size_t home;
    std::size_t server;
  };
  void NoteWritesAround(std::span<const Around> around) {
    for (const Around& a : around) NoteWriteAround(*a.op, a.home, a.server);
  }

 private:
  // Deletes (or flushes) what writes around `owner` left behind, on it and on
  // the servers that took them. False if it must stay out of routing for now;
  // a server that took them and cannot be reached stays owed, and does not
  // keep the owner out.
  bool RepairBeforeUse(std::size_t owner);
  // Deletes `server`'s copies of `owner`'s keys kept from an earlier outage,
  // before it stands in for `owner` again. False if they could not be deleted.
  bool RepairStale(std::size_t owner, std::size_t server);
  // Runs a repair's deletes or flush, on the owner first and on the others only
  // once the owner is clean; the result says which servers it cleaned.
  std::vector<bool> Undo(std::size_t owner, const FailoverLedger::Debt& debt);
  // The deletes (or, past max_keys, the flush) of `debt` on `servers`.
  void Clean(const FailoverLedger::Debt& debt, std::span<const std::size_t> servers,
             std::vector<bool>* cleaned);
  // Undo(); should it throw, the repair is settled as undone nowhere (retried
  // after retry_timeout from `now`) before the exception goes on.
  std::vector<bool> UndoOrSettle(std::size_t owner, FailoverLedger::Debt& debt,
                                 Clock::time_point now);
  void DeleteKeys(const std::vector<std::string>& keys, std::span<const std::size_t> servers,
                  std::vector<bool>* cleaned);

  ServerPool& pool_;
  const std::uint64_t runner_owner_;  // BatchRunner::NewOwner(): the repairs' runner
  FailoverLedger ledger_;
  FillBatch fill_;
  FlushServers flush_;
};

// The pool's route of `op`, under failover's rule when `failover` is not null:
// false (op.status says why) if it goes nowhere. `*home` is the key's own
// server; `*server` differs from it only with failover.
inline bool RouteOperation(ServerPool& pool, Failover* failover, Operation& op,
                           std::size_t* server, std::size_t* home) {
  Result<std::size_t> routed = pool.Route(op.key, home);
  if (!routed.ok()) {
    op.status = routed.status();
    return false;
  }
  *server = *routed;
  // Without failover, or with every server up and nothing owed, that is all.
  if (failover != nullptr && failover->Concerns(*server, *home)) {
    return failover->Route(op, *home, server);
  }
  return true;
}

// A batch's routing: puts each operation of `ops` that the store's `check`
// passes (op.status = check(op)) in the group of the server RouteOperation
// picks, and adds those sent around their home server to `*around`, for
// Failover::NoteWritesAround once the batch has run.
template <class Check>
void AddRoutedOperations(BatchRunner& runner, ServerPool& pool, Failover* failover,
                         std::span<Operation> ops, Check&& check,
                         std::vector<Failover::Around>* around) {
  for (Operation& op : ops) {
    std::size_t server = 0;
    std::size_t home = 0;
    op.status = check(op);
    if (!op.status.ok() || !RouteOperation(pool, failover, op, &server, &home)) continue;
    runner.Add(server, op);
    if (server != home) [[unlikely]]
      around->push_back({&op, home, server});
  }
}

}  // namespace cachet::net
