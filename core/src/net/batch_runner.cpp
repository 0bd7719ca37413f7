// BatchRunner: leases, one RunExchanges over every server, health reports and
// settling (see batch_runner.h).
#include "cachet/net/batch_runner.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <string>
#include <utility>

#include "cachet/net/exchange.h"

namespace cachet::net {

ServerBatch::~ServerBatch() = default;

Status UnansweredStatus(const Operation& op, const Status& transport, std::string_view store) {
  if (!transport.IsTooLarge()) return transport;
  const std::string unanswered = std::string(store) +
                                 ": not answered: the connection was dropped after a reply too "
                                 "large to read (" + std::string(transport.message()) + ")";
  if (op.kind == OpKind::kGet) return Status::IoError(unanswered);
  return Status::IoError(unanswered + "; the operation may have been applied");
}

BatchRunner::~BatchRunner() = default;

std::uint64_t BatchRunner::NewOwner() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void BatchRunner::Reset(std::uint64_t owner, std::size_t servers) {
  // A new owner while exchanges wait for Run() would free batches they point to.
  assert((phase_ == Phase::kRan || enlisted_.empty()) &&
         "BatchRunner claimed between Enlist and Run");
  owner_ = owner;
  groups_.assign(servers, {});
  batches_.clear();
  batches_.resize(servers);
  enlisted_.clear();
  phase_ = Phase::kEnlisting;
}

void BatchRunner::BeginEnlisting() noexcept {
  if (phase_ == Phase::kEnlisting) return;  // a batch is being enlisted already
  enlisted_.clear();
  phase_ = Phase::kEnlisting;
}

void BatchRunner::Abandon() noexcept {
  for (ServerPool::Lease& lease : leases_) lease->Close();
  leases_.clear();  // closed: nothing goes back to a pool
  enlisted_.clear();
  phase_ = Phase::kEnlisting;
  for (std::vector<Operation*>& group : groups_) group.clear();
  for (std::unique_ptr<ServerBatch>& batch : batches_) batch.reset();
}

void BatchRunner::Enlist(ServerPool& pool, std::size_t server, ServerBatch& batch) {
  assert(!busy_ && "BatchRunner is not re-entrant");
  EnlistOne(pool, server, batch);
}

void BatchRunner::EnlistOne(ServerPool& pool, std::size_t server, ServerBatch& batch) {
  BeginEnlisting();
  enlisted_.push_back({&pool, server, &batch, Status::OK(), false});
}

bool BatchRunner::Run(Deadline deadline, const ConnectionSetup* setup) {
  assert(!busy_ && "BatchRunner is not re-entrant");
  const Busy busy(*this);
  BeginEnlisting();  // a Run() with nothing enlisted since the last one runs nothing
  phase_ = Phase::kRan;
  if (enlisted_.empty()) return true;
  for (const Enlisted& e : enlisted_) {
    // A batch that expects no reply (memcached's noreply writes) reads nothing back.
    const ServerPool::Use use =
        e.batch->done() ? ServerPool::Use::kWritesOnly : ServerPool::Use::kReadsReplies;
    leases_.push_back(e.pool->Acquire(e.server, use, deadline));
  }
  // Waiting for pooled connections may have used the call's time up; a server
  // asked nothing must not be counted as failing (ClusterRouter's rule too).
  const Clock::time_point acquired = Clock::now();
  if (acquired >= deadline) return SettleLate();
  // One server's wait shortens every exchange of the call.
  const bool waited = std::any_of(leases_.begin(), leases_.end(),
                                  [](const ServerPool::Lease& lease) { return lease.waited(); });
  for (Enlisted& e : enlisted_) e.squeezed = e.pool->Squeezed(waited, acquired, deadline);
  // A connection connected anew logs in first (`setup`), in the same loop.
  const std::size_t used = enlisted_.size();
  if (exchanges_.size() < used) exchanges_.resize(used);
  for (std::size_t i = 0; i < used; ++i) {
    Exchange& x = exchanges_[i];
    x.connection = &leases_[i].connection();
    enlisted_[i].batch->Request(&x.request);
    x.reader = enlisted_[i].batch;
    x.setup = setup;
    enlisted_[i].pooled = x.connection->connected();
    enlisted_[i].heard = x.connection->buffer().received();
  }
  RunExchanges(std::span<Exchange>(exchanges_.data(), used), deadline);
  ResendUnanswered(used, deadline);
  bool all_ok = true;
  for (std::size_t i = 0; i < used; ++i) {
    Enlisted& e = enlisted_[i];
    e.status = std::move(exchanges_[i].status);
    e.sent = exchanges_[i].sent;
    all_ok = all_ok && e.status.ok();
    Finish(e, *exchanges_[i].connection);
  }
  leases_.clear();  // the connections go back to their pools
  return all_ok;
}

void BatchRunner::ResendUnanswered(std::size_t used, Deadline deadline) {
  resent_.clear();
  for (std::size_t i = 0; i < used; ++i) {
    const Exchange& x = exchanges_[i];
    const Enlisted& e = enlisted_[i];
    if (!x.status.ok() && e.pooled && e.batch->reads_only() &&
        ClosedUnanswered(x.status, *x.connection, e.heard)) [[unlikely]] {
      resent_.push_back(i);
    }
  }
  if (resent_.empty()) [[likely]]
    return;
  // Only with time left: past the deadline the first failure stands (an idle
  // close, not counted against the server); a resend left less than io_timeout
  // by the first round does not count a timeout against its server either.
  const Clock::time_point now = Clock::now();
  if (now >= deadline) return;
  for (std::size_t i : resent_) {
    Enlisted& e = enlisted_[i];
    e.squeezed = e.squeezed || e.pool->Squeezed(true, now, deadline);
    e.pool->NoteReconnect(e.server);
  }
  again_.resize(resent_.size());
  for (std::size_t k = 0; k < resent_.size(); ++k) {
    const Exchange& first = exchanges_[resent_[k]];
    Exchange& x = again_[k];
    x.connection = first.connection;  // closed by the failure: connected anew
    enlisted_[resent_[k]].batch->Request(&x.request);
    x.reader = first.reader;
    x.setup = first.setup;
  }
  RunExchanges(std::span<Exchange>(again_.data(), again_.size()), deadline);
  // The first request went out (`sent` stays true); the second's outcome is the call's.
  for (std::size_t k = 0; k < resent_.size(); ++k) {
    exchanges_[resent_[k]].status = std::move(again_[k].status);
  }
}

bool BatchRunner::SettleLate() {
  for (std::size_t i = 0; i < enlisted_.size(); ++i) {
    enlisted_[i].status = LateCall();
    enlisted_[i].batch->Settle(enlisted_[i].status);
  }
  leases_.clear();  // unused: they go back to their pools as they were
  return false;
}

void BatchRunner::Finish(Enlisted& e, Connection& connection) {
  // On failure every operation the server did not answer takes the exchange's status.
  e.batch->Settle(e.status);
  // A timeout after a wait that left too little time is the wait's, not the server's.
  if (!(e.squeezed && e.status.IsTimeout())) e.pool->Report(e.server, connection, e.status);
  if (e.batch->poisoned()) CloseOutOfStep(connection);
}

std::vector<Status> RunOnEach(std::span<const ServerRef> servers,
                              std::span<ServerBatch* const> batches, Deadline deadline,
                              const ConnectionSetup* setup) {
  assert(servers.size() == batches.size());
  std::vector<Status> outcomes(servers.size());
  std::vector<std::size_t> asked;  // the index of each enlisted exchange's server
  BatchRunner runner;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const ServerRef& s = servers[i];
    if (!s.pool->Available(s.server)) {
      outcomes[i] = s.pool->DeadServerError(s.server);
      continue;
    }
    runner.Enlist(*s.pool, s.server, *batches[i]);
    asked.push_back(i);
  }
  runner.Run(deadline, setup);
  for (std::size_t k = 0; k < asked.size(); ++k) outcomes[asked[k]] = runner.status(k);
  return outcomes;
}

}  // namespace cachet::net
