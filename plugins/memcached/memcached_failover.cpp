// MemcachedBackend with failover: noting writes routed around a dead server,
// and repairing it before it serves its keys again (failover_ledger.h).
//
// Only keys routed around a dead server, and every key while some server owes
// a repair, come here; with every server up and nothing owed, Route() costs one
// more load and compare.
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "memcached_backend.h"

namespace cachet::memcached {

namespace {

std::int64_t Nanos(net::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Whether an operation can leave a value on the server it went to that its
// owner does not have.
bool ChangesValue(OpKind kind) {
  return kind == OpKind::kStore || kind == OpKind::kRemove || kind == OpKind::kIncr ||
         kind == OpKind::kDecr;
}

}  // namespace

bool MemcachedBackend::RouteAfterOutage(Operation& op, std::size_t home, std::size_t* server) {
  if (*server == home && !RepairBeforeUse(home)) {
    // Its copy may be older than what went elsewhere: around it still.
    Result<std::size_t> around = pool_.RouteAround(op.key, home);
    if (!around.ok()) {
      op.status = around.status();
      return false;
    }
    *server = *around;
  }
  // Noted before it is sent, so a repair that starts meanwhile deletes the
  // owner's older copy; and again once the exchange is over (NoteWriteAround).
  if (*server != home && ChangesValue(op.kind)) ledger_->Record(home, op.key, *server);
  return true;
}

void MemcachedBackend::NoteWriteAround(const Operation& op, std::size_t home, std::size_t server) {
  // Whatever the outcome: a write that timed out may still have been applied.
  // A note made after a repair took the owner's keys stays owed (Settle).
  if (ChangesValue(op.kind)) ledger_->Record(home, op.key, server);
}

Status MemcachedBackend::RunOneAround(Operation& op, std::size_t server, std::size_t home,
                                      const BatchSettings& settings, Item* hit) {
  Status s = RunBatchOfOne(op, server, settings, hit);
  NoteWriteAround(op, home, server);
  return s;
}

bool MemcachedBackend::RepairBeforeUse(std::size_t owner) {
  FailoverLedger::Debt debt;
  const net::Clock::time_point now = net::Clock::now();
  switch (ledger_->Take(owner, Nanos(now), &debt)) {
    case FailoverLedger::Claim::kClear:
      return true;
    case FailoverLedger::Claim::kBusy:
      return false;
    case FailoverLedger::Claim::kTaken:
      break;
  }
  bool repaired = true;
  if (debt.overflowed) {
    // Not every key was noted: only a flush removes them all.
    std::vector<std::size_t> servers;
    for (std::size_t s = 0; s < pool_.size(); ++s) {
      if (s == owner || (debt.moved_to[s] && pool_.Available(s))) servers.push_back(s);
    }
    repaired = RunOnServers("flush_all", servers, [](std::size_t, const auto&) {}).ok();
  } else {
    repaired = DeleteMovedKeys(owner, debt);
  }
  ledger_->Settle(owner, repaired, std::move(debt), Nanos(now + options_.pool.retry_timeout));
  return repaired;
}

bool MemcachedBackend::DeleteMovedKeys(std::size_t owner, const FailoverLedger::Debt& debt) {
  if (debt.keys.empty()) return true;
  // The owner, and the servers that took its keys and are up: one that is
  // dead now cannot be reached, and the owner is not kept waiting for it.
  std::vector<std::size_t> servers;
  for (std::size_t s = 0; s < pool_.size(); ++s) {
    if (s == owner || (debt.moved_to[s] && pool_.Available(s))) servers.push_back(s);
  }
  // Its own batches, exchanges and leases: this runs in the middle of routing
  // a batch, whose per-thread scratch is in use.
  std::vector<std::vector<Operation>> deletes(servers.size());
  std::vector<std::unique_ptr<ServerBatch>> batches;
  std::vector<net::ServerPool::Lease> leases;
  std::vector<net::Exchange> exchanges(servers.size());
  leases.reserve(servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    deletes[i].resize(debt.keys.size());
    batches.push_back(NewBatch());
    ServerBatch& batch = *batches.back();
    batch.Reset({options_.binary_keys});
    for (std::size_t k = 0; k < debt.keys.size(); ++k) {
      deletes[i][k].kind = OpKind::kRemove;
      deletes[i][k].key = debt.keys[k];
      batch.Add(deletes[i][k]);
    }
    batch.Finish();
    leases.push_back(pool_.Acquire(servers[i]));
    exchanges[i].connection = &leases.back().connection();
    batch.request().Iovecs(&exchanges[i].request);
    exchanges[i].reader = &batch;
  }
  net::RunExchanges(exchanges, net::Clock::now() + options_.pool.connection.request_timeout);
  bool repaired = true;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    batches[i]->Settle(exchanges[i].status);
    pool_.Report(servers[i], *exchanges[i].connection, exchanges[i].status);
    if (batches[i]->poisoned()) exchanges[i].connection->Close();
    repaired = repaired && exchanges[i].status.ok();
    for (const Operation& op : deletes[i]) {
      repaired = repaired && (op.status.ok() || op.status.IsNotFound());
    }
  }
  return repaired;
}

}  // namespace cachet::memcached
