// BatchRunner: leases, one RunExchanges over every server, health reports and
// settling (see batch_runner.h).
#include "cachet/net/batch_runner.h"

#include <atomic>
#include <utility>

namespace cachet::net {

ServerBatch::~ServerBatch() = default;

ConnectionSetup::~ConnectionSetup() = default;

BatchRunner::~BatchRunner() = default;

std::uint64_t BatchRunner::NewOwner() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {

// The status of an exchange that never began because its call's time was up.
Status LateStatus() {
  return Status::Timeout("the call's deadline passed before its request could be sent");
}

}  // namespace

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
  running_.clear();
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
  enlisted_.push_back({&pool, server, &batch, Status::OK()});
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
  if (Clock::now() >= deadline) return SettleLate();
  bool all_ok = setup == nullptr || Prepare(*setup, deadline);
  std::size_t used = 0;
  for (std::size_t i = 0; i < enlisted_.size(); ++i) {
    if (!enlisted_[i].status.ok()) continue;  // its setup failed
    if (used == exchanges_.size()) exchanges_.emplace_back();
    Exchange& x = exchanges_[used++];
    x.connection = &leases_[i].connection();
    enlisted_[i].batch->Request(&x.request);
    x.reader = enlisted_[i].batch;
    running_.push_back(i);
  }
  RunExchanges(std::span<Exchange>(exchanges_.data(), used), deadline);
  for (std::size_t k = 0; k < used; ++k) {
    Enlisted& e = enlisted_[running_[k]];
    e.status = std::move(exchanges_[k].status);
    all_ok = all_ok && e.status.ok();
    Finish(e, *exchanges_[k].connection);
  }
  running_.clear();
  leases_.clear();  // the connections go back to their pools
  return all_ok;
}

bool BatchRunner::SettleLate() {
  for (std::size_t i = 0; i < enlisted_.size(); ++i) {
    enlisted_[i].status = LateStatus();
    enlisted_[i].batch->Settle(enlisted_[i].status);
  }
  leases_.clear();  // unused: they go back to their pools as they were
  return false;
}

bool BatchRunner::Prepare(const ConnectionSetup& setup, Deadline deadline) {
  // Every connect starts before any handshake waits on one, so a server whose
  // connect hangs does not hold the others back by its connect timeout.
  for (ServerPool::Lease& lease : leases_) {
    if (!lease->connected()) (void)lease->StartConnect(deadline);
  }
  bool all_ok = true;
  for (std::size_t i = 0; i < enlisted_.size(); ++i) {
    Connection& connection = leases_[i].connection();
    if (Clock::now() >= deadline) {
      // An earlier handshake used the time up: this server was asked nothing,
      // so its health is not touched; its connect may be half done.
      enlisted_[i].status = LateStatus();
      enlisted_[i].batch->Settle(enlisted_[i].status);
      connection.Close();
      all_ok = false;
      continue;
    }
    Status s = setup.Prepare(connection, deadline);
    if (s.ok()) continue;
    enlisted_[i].status = std::move(s);
    Finish(enlisted_[i], connection);
    connection.Close();  // a handshake left half done must not be pooled as ready
    all_ok = false;
  }
  return all_ok;
}

void BatchRunner::Finish(Enlisted& e, Connection& connection) {
  // On failure every operation the server did not answer takes the exchange's status.
  e.batch->Settle(e.status);
  e.pool->Report(e.server, connection, e.status);
  if (e.batch->poisoned()) connection.Close();
}

}  // namespace cachet::net
