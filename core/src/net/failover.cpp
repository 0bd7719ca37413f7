// Failover: noting writes routed around a dead server, and repairing it before
// it serves its keys again (failover.h, failover_ledger.h).
#include "cachet/net/failover.h"

#include <chrono>
#include <string>
#include <utility>

namespace cachet::net {

namespace {

std::int64_t Nanos(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Whether an operation can leave a value on the server it went to that its
// owner does not have.
bool ChangesValue(OpKind kind) {
  return kind == OpKind::kStore || kind == OpKind::kRemove || kind == OpKind::kIncr ||
         kind == OpKind::kDecr;
}

// Whether an operation leaves the key as it says whatever it held: a set or a delete.
bool ReplacesValue(const Operation& op) {
  return op.kind == OpKind::kRemove || (op.kind == OpKind::kStore && op.mode == StoreMode::kSet);
}

}  // namespace

Failover::Failover(ServerPool& pool, std::size_t max_keys, FillBatch fill, FlushServers flush)
    : pool_(pool),
      runner_owner_(BatchRunner::NewOwner()),
      ledger_(pool.size(), max_keys),
      fill_(std::move(fill)),
      flush_(std::move(flush)) {}

std::unique_ptr<Failover> Failover::IfEnabled(ServerPool& pool, FillBatch fill,
                                             FlushServers flush) {
  if (!pool.options().failover || pool.size() < 2) return nullptr;
  return std::make_unique<Failover>(pool, pool.options().failover_max_keys, std::move(fill),
                                    std::move(flush));
}

bool Failover::Route(Operation& op, std::size_t home, std::size_t* server) {
  if (*server == home && !RepairBeforeUse(home)) {
    // Its copy may be older than what went elsewhere: around it still.
    Result<std::size_t> around = pool_.RouteAround(op.key, home);
    if (!around.ok()) {
      op.status = around.status();
      return false;
    }
    *server = *around;
  }
  if (*server == home) return true;
  // Stand-ins may have changed during the outage: the key is served where its
  // last write went, never from an older copy on another stand-in.
  std::size_t last = 0;
  if (ledger_.AnyOwed() && ledger_.LastServer(home, op.key, &last) && last != *server) {
    if (pool_.Available(last)) {
      *server = last;
    } else if (!ReplacesValue(op)) {
      op.status = Status::Unavailable("the last write of this key went to " +
                                      pool_.address(last).HostPort() + ", which is down");
      return false;
    }
  }
  // The server standing in may keep copies from an earlier outage of `home`,
  // older than what `home` took since: they go first, or the key goes nowhere.
  if (ledger_.AnyOwed() && !RepairStale(home, *server)) {
    op.status = Status::Unavailable(pool_.address(*server).HostPort() +
                                    ": holds older copies of the keys of " +
                                    pool_.address(home).HostPort() + " that are being deleted");
    return false;
  }
  // Noted before it is sent, so a repair that starts meanwhile deletes the
  // owner's older copy; and again once the exchange is over (NoteWriteAround).
  if (ChangesValue(op.kind)) ledger_.Record(home, op.key, *server, /*routed=*/true);
  return true;
}

void Failover::NoteWriteAround(const Operation& op, std::size_t home, std::size_t server) {
  // Whatever the outcome: a write that timed out may still have been applied.
  // A note made after a repair took the owner's keys stays owed (Settle).
  if (ChangesValue(op.kind)) ledger_.Record(home, op.key, server, /*routed=*/false);
}

bool Failover::RepairBeforeUse(std::size_t owner) {
  FailoverLedger::Debt debt;
  const Clock::time_point now = Clock::now();
  const FailoverLedger::Claim claim = ledger_.Take(owner, Nanos(now), &debt);
  // Nothing owed: usable now; another thread repairing (or a recent failure): not yet.
  if (claim != FailoverLedger::Claim::kTaken) return claim == FailoverLedger::Claim::kClear;
  const std::vector<bool> cleaned = UndoOrSettle(owner, debt, now);
  return ledger_.Settle(owner, std::move(debt), cleaned,
                        Nanos(now + pool_.options().retry_timeout));
}

bool Failover::RepairStale(std::size_t owner, std::size_t server) {
  FailoverLedger::Debt debt;
  const FailoverLedger::Claim claim = ledger_.TakeStale(owner, server, &debt);
  if (claim != FailoverLedger::Claim::kTaken) return claim == FailoverLedger::Claim::kClear;
  const std::vector<bool> cleaned = UndoOrSettle(owner, debt, Clock::now());
  const bool repaired = cleaned[server];
  // The owner is out of routing whatever Settle says: only `server` matters.
  static_cast<void>(ledger_.Settle(owner, std::move(debt), cleaned,
                                   Nanos(Clock::now() + pool_.options().retry_timeout)));
  return repaired;
}

std::vector<bool> Failover::UndoOrSettle(std::size_t owner, FailoverLedger::Debt& debt,
                                         Clock::time_point now) {
  const std::vector<bool> none(pool_.size(), false);  // made before: the handler allocates nothing
  try {
    return Undo(owner, debt);
  } catch (...) {
    // Out of memory (or a store's callback threw): nothing counts as undone,
    // and the repair is tried again after retry_timeout, not claimed for good.
    static_cast<void>(
        ledger_.Settle(owner, std::move(debt), none, Nanos(now + pool_.options().retry_timeout)));
    throw;
  }
}

std::vector<bool> Failover::Undo(std::size_t owner, const FailoverLedger::Debt& debt) {
  std::vector<bool> cleaned(pool_.size(), false);
  // The owner first, if it owes. While it cannot be reached (a probe after
  // retry_timeout of a server still down) its keys stay where their writes
  // went: deleting them there would lose writes those servers acknowledged.
  if (debt.OwnerOwes()) {
    const std::size_t only_owner[] = {owner};
    Clean(debt, only_owner, &cleaned);
    if (!cleaned[owner]) return cleaned;
  }
  // Then the servers that took or kept its keys and are up: one that is dead
  // now cannot be reached, and the owner is not kept waiting for it (it stays owed).
  std::vector<std::size_t> servers;
  for (std::size_t s = 0; s < pool_.size(); ++s) {
    if (s != owner && (debt.moved_to[s] || debt.stale_on[s]) && pool_.Available(s)) {
      servers.push_back(s);
    }
  }
  if (!servers.empty()) Clean(debt, servers, &cleaned);
  return cleaned;
}

void Failover::Clean(const FailoverLedger::Debt& debt, std::span<const std::size_t> servers,
                     std::vector<bool>* cleaned) {
  if (debt.overflowed) {
    // Not every key was noted: only emptying the servers removes them all.
    flush_(servers, cleaned);
  } else {
    DeleteKeys(debt.keys, servers, cleaned);
  }
}

void Failover::DeleteKeys(const std::vector<std::string>& keys,
                          std::span<const std::size_t> servers, std::vector<bool>* cleaned) {
  if (keys.empty()) {
    for (std::size_t s : servers) (*cleaned)[s] = true;
    return;
  }
  // A runner of its own: this runs in the middle of routing a batch, while
  // the thread's runner is being filled.
  BatchRunner runner;
  runner.Claim(runner_owner_, pool_.size());
  std::vector<std::vector<Operation>> deletes(servers.size());
  std::vector<Operation*> group(keys.size());
  std::vector<std::size_t> enlisted;  // indexes into `servers`, in the runner's order
  for (std::size_t i = 0; i < servers.size(); ++i) {
    deletes[i].resize(keys.size());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      deletes[i][k].kind = OpKind::kRemove;
      deletes[i][k].key = keys[k];
      group[k] = &deletes[i][k];
    }
    // Null when the store sends nothing (it settled every delete itself).
    if (ServerBatch* batch = fill_(servers[i], group, runner.slot(servers[i]))) {
      runner.Enlist(pool_, servers[i], *batch);
      enlisted.push_back(i);
    }
  }
  runner.Run(pool_.CallDeadline());
  std::vector<bool> exchanged(servers.size(), true);  // a store that sent nothing exchanged fine
  for (std::size_t n = 0; n < enlisted.size(); ++n) exchanged[enlisted[n]] = runner.status(n).ok();
  // A server is clean when its exchange went through and each delete removed
  // its key or found none.
  for (std::size_t i = 0; i < servers.size(); ++i) {
    bool deleted = exchanged[i];
    for (const Operation& op : deletes[i]) {
      deleted = deleted && (op.status.ok() || op.status.IsNotFound());
    }
    (*cleaned)[servers[i]] = deleted;
  }
}

}  // namespace cachet::net
