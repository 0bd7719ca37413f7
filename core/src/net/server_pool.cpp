// ServerPool: routing with failover, per-server idle connections and health.
#include "cachet/net/server_pool.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "cachet/log.h"

namespace cachet::net {

namespace {

std::int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::atomic<std::uint64_t> stream_faults{0};

}  // namespace

std::uint64_t StreamFaults() noexcept { return stream_faults.load(std::memory_order_acquire); }
void NoteStreamFault() noexcept { stream_faults.fetch_add(1, std::memory_order_release); }

std::size_t ServerPool::SparesHeld(const Server& s) noexcept {
  std::size_t held = 0;
  for (const SpareSlot& slot : s.spares)
    held += slot.connection.load(std::memory_order_relaxed) != nullptr;
  return held;
}

Connection* ServerPool::TakeAnySpare(Server& s) noexcept {
  for (SpareSlot& slot : s.spares) {
    // seq_cst, paired with ~Lease's: either it sees a waiter or a waiter sees its connection.
    if (slot.connection.load(std::memory_order_seq_cst) == nullptr) continue;
    if (Connection* c = slot.connection.exchange(nullptr, std::memory_order_seq_cst)) return c;
  }
  return nullptr;
}

ServerPool::ServerPool(std::vector<ServerAddress> servers,
                       std::unique_ptr<Distribution> distribution, ServerPoolOptions options)
    : distribution_(std::move(distribution)), options_(options) {
  // At most pool_size connections wait in the slots: the largest power of two that fits.
  std::size_t slots = 1;
  while (slots * 2 <= std::min(kSpareSlots, options_.pool_size)) slots *= 2;
  spare_mask_ = slots - 1;
  servers_.reserve(servers.size());
  for (ServerAddress& a : servers) servers_.push_back(std::make_unique<Server>(std::move(a)));
}

ServerPool::~ServerPool() = default;

bool ServerPool::RestOver(const Server& s) noexcept {
  // Once the rest is over the server is tried again; one more failure puts it
  // back to rest at once, because its count is still at the limit.
  return NowNanos() >= s.dead_until_ns.load(std::memory_order_relaxed);
}

Status ServerPool::DeadServerError(std::size_t server) const {
  const Server& s = *servers_[server];
  std::int64_t left_ms = (s.dead_until_ns.load(std::memory_order_relaxed) - NowNanos()) / 1000000;
  // The words of the log line that marked it ("marked dead after N failures in
  // a row"), N the limit it reached; the failures since count the tries after.
  const std::uint32_t failures = s.failures.load(std::memory_order_relaxed);
  const std::uint32_t marked_at = std::min(failures, options_.failure_limit);
  std::string message = s.address.HostPort() + ": marked dead after " +
                        std::to_string(marked_at) + " failures in a row";
  if (failures > marked_at) {
    message += " (" + std::to_string(failures - marked_at) + " more on tries since)";
  }
  return Status::Unavailable(message + "; tried again in " +
                             std::to_string(std::max<std::int64_t>(left_ms, 0)) + " ms");
}

Result<std::size_t> ServerPool::Route(std::string_view key, std::size_t* home_out) const {
  // One server needs no hashing: every key lives there.
  std::size_t home = servers_.size() == 1 ? 0 : distribution_->ServerFor(key);
  if (home_out != nullptr) *home_out = home;
  if (Available(home)) return home;
  if (!options_.failover) return DeadServerError(home);
  return RouteAround(key, home);
}

Result<std::size_t> ServerPool::RouteAround(std::string_view key, std::size_t server) const {
  auto excluded = std::make_unique<bool[]>(servers_.size());
  for (std::size_t i = 0; i < servers_.size(); ++i) excluded[i] = i == server || !Available(i);
  std::size_t next = distribution_->ServerFor(key, {excluded.get(), servers_.size()});
  if (next != Distribution::npos) return next;
  if (!Available(server)) return DeadServerError(server);
  return Status::Unavailable(servers_[server]->address.HostPort() +
                             ": kept out of routing until repaired after an outage, and no "
                             "other server is live");
}

// Out of line, so that the usual acquire saves no registers for it.
[[gnu::noinline]] Connection* ServerPool::IdleOrNew(Server& s, Deadline deadline, bool* waited) {
  std::unique_lock<std::mutex> lock(s.mutex);
  const std::size_t bound = options_.max_connections;
  // With threads already waiting, a newcomer waits behind them.
  if (s.queue.empty()) {
    if (!s.idle.empty()) {
      Connection* c = s.idle.back().release();
      s.idle.pop_back();
      return c;
    }
    // Another thread's slot holds a connection it is not using now.
    if (Connection* c = TakeAnySpare(s)) return c;
    if (bound == 0 || s.open.load(std::memory_order_relaxed) < bound) {
      s.open.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      return OpenInPlace(s);
    }
  }
  // Every connection the bound allows is lent: wait in line for one to be
  // handed over (Release, HandOutSpares) or for a place to open one.
  if (deadline == Deadline{}) deadline = CallDeadline();
  *waited = true;
  Waiter me;
  s.queue.push_back(&me);
  s.waiters.fetch_add(1, std::memory_order_seq_cst);
  // seq_cst, paired with ~Lease's: a connection that went to a slot before
  // this thread was counted is seen here.
  HandOutSpares(s);
  bool last_look = false;
  while (!me.handed && !me.may_open && !last_look) {
    // Past the deadline, one more look: a hand-over may have come with it.
    last_look =
        me.turn.wait_until(lock, deadline) == std::cv_status::timeout && Clock::now() >= deadline;
  }
  if (me.handed) return me.handed.release();  // HandToFirst took it off the queue
  if (me.may_open) {
    lock.unlock();
    return OpenInPlace(s);
  }
  s.queue.erase(std::find(s.queue.begin(), s.queue.end(), &me));
  s.waiters.fetch_sub(1, std::memory_order_relaxed);
  s.pool_waits_timed_out.fetch_add(1, std::memory_order_relaxed);
  lock.unlock();
  auto stand_in = std::make_unique<Connection>(s.address, options_.connection);
  stand_in->RefuseConnects(
      Status::Timeout(s.address.HostPort() + ": all " + std::to_string(bound) +
                      " connections (max_connections) stayed in use until the call's deadline"));
  return stand_in.release();
}

ServerPool::Lease ServerPool::AcquireOther(Server& s, std::size_t server,
                                           std::atomic<Connection*>* home_slot, Connection* c,
                                           Use use, Deadline deadline) {
  bool waited = false;
  if (c == nullptr) c = IdleOrNew(s, deadline, &waited);
  if (c->refused()) [[unlikely]]
    return Lease(this, &s, server, home_slot, std::unique_ptr<Connection>(c));
  const bool quiet =
      use == Use::kWritesOnly ? c->QuietForWritesOnly(Clock::now()) : c->QuietSinceLastUse();
  if (quiet) {
    c->MarkReused();
  } else {
    DropStale(s, *c);
  }
  Lease lease(this, &s, server, home_slot, std::unique_ptr<Connection>(c));
  lease.waited_ = waited;
  return lease;
}

void ServerPool::DropStale(Server& s, Connection& connection) noexcept {
  if (connection.UnaskedBytesArrived()) NoteStreamFault();
  connection.Close();
  s.connects.fetch_add(1, std::memory_order_relaxed);  // the borrower connects anew
}

void ServerPool::WakeWaiter(Server& s) {
  std::lock_guard<std::mutex> lock(s.mutex);
  HandOutSpares(s);
}

void ServerPool::HandOutSpares(Server& s) {
  while (!s.queue.empty()) {
    Connection* c = TakeAnySpare(s);
    if (c == nullptr) return;
    HandToFirst(s, std::unique_ptr<Connection>(c));
  }
}

void ServerPool::HandToFirst(Server& s, std::unique_ptr<Connection> connection) {
  Waiter* first = s.queue.front();
  s.queue.pop_front();
  s.waiters.fetch_sub(1, std::memory_order_relaxed);
  if (connection) {
    first->handed = std::move(connection);
  } else {
    first->may_open = true;
  }
  first->turn.notify_one();
}

void ServerPool::Return(Lease& lease) noexcept {
  if (lease.spare_ != nullptr && lease.connection_->connected() &&
      lease.home_->waiters.load(std::memory_order_relaxed) == 0) {
    // The slot holds another thread's connection (threads beyond the slots
    // share one): this one takes the slot, the one found there goes on.
    lease.connection_.reset(
        lease.spare_->exchange(lease.connection_.release(), std::memory_order_seq_cst));
    if (!lease.connection_) {  // emptied meanwhile
      if (lease.home_->waiters.load(std::memory_order_seq_cst) != 0) WakeWaiter(*lease.home_);
      return;
    }
  }
  Release(lease.server_, std::move(lease.connection_));
}

void ServerPool::Release(std::size_t server, std::unique_ptr<Connection> connection) {
  Server& s = *servers_[server];
  if (connection->refused()) return;  // a stand-in was never counted
  // A live connection goes to a waiting thread, or is kept while fewer than
  // pool_size are idle (in the list and the spare slots); a closed one (after
  // an error), one from before a fork, one beyond pool_size, or any with
  // pool_size 0 is dropped.
  if (connection->connected() && options_.pool_size != 0) {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.queue.empty()) return HandToFirst(s, std::move(connection));
    if (s.idle.size() + SparesHeld(s) < options_.pool_size) {
      s.idle.push_back(std::move(connection));
      return;
    }
  }
  // Closed outside the lock, and before its place is given up: the server
  // never sees more than max_connections at once.
  connection.reset();
  GiveUpPlace(s);
}

void ServerPool::GiveUpPlace(Server& s) {
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.queue.empty()) return HandToFirst(s, nullptr);  // the place goes to the first waiter
  s.open.fetch_sub(1, std::memory_order_relaxed);
}

Connection* ServerPool::OpenInPlace(Server& s) {
  try {
    return new Connection(s.address, options_.connection);
  } catch (...) {
    GiveUpPlace(s);
    throw;
  }
}

namespace {

// The health counter of a failed exchange's kind, or null for an outcome that
// is not a failure of the exchange.
template <class Server>
std::atomic<std::uint64_t>* ErrorCounter(Server& s, const Status& transport) {
  switch (transport.code()) {
    case StatusCode::kTimeout:
      return &s.timeouts;
    case StatusCode::kUnavailable:
      return &s.unavailable;
    case StatusCode::kIoError:
      return &s.io_errors;
    case StatusCode::kProtocolError:
      return &s.protocol_errors;
    case StatusCode::kAuthFailed:
      return &s.other_errors;
    default:
      return nullptr;
  }
}

}  // namespace

void ServerPool::ReportNotOk(std::size_t server, const Connection& used,
                             const Status& transport) noexcept {
  // A stand-in lent after waiting for the bound: the pool's refusal, not the server's.
  if (used.refused()) return;
  if (auto* counter = ErrorCounter(*servers_[server], transport); counter != nullptr) {
    counter->fetch_add(1, std::memory_order_relaxed);
  }
  if (transport.IsAuthFailed()) return;  // wrong credentials: nothing about health
  if (transport.IsProtocolError() && used.reused()) NoteStreamFault();
  const bool failed = transport.IsTimeout() || transport.IsUnavailable() || transport.IsIoError() ||
                      transport.IsProtocolError();
  if (!failed) return ReportSuccess(server);
  // The server closed this connection while it was idle (or reset it): the
  // next borrower connects anew, and the server may be perfectly well.
  if (transport.IsIoError() && used.reused()) return;
  // It answered before it took the whole request, then hung up or not (a
  // refusal of that request: a Redis value over proto-max-bulk-len): the
  // request's failure, not the server's.
  if ((transport.IsIoError() || transport.IsProtocolError()) && used.refused_request()) return;
  ReportFailure(server, transport);
}

void ServerPool::ReportFailure(std::size_t server, const Status& why) noexcept {
  Server& s = *servers_[server];
  std::uint32_t failures = s.failures.fetch_add(1, std::memory_order_relaxed) + 1;
  if (failures >= options_.failure_limit) {
    auto rest = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.retry_timeout);
    s.dead_until_ns.store(NowNanos() + rest.count(), std::memory_order_relaxed);
    s.marked_dead.fetch_add(1, std::memory_order_relaxed);
  }
  // Once per outage: the failure that marks it; those after each rest only re-arm it.
  if (failures == options_.failure_limit) {
    try {
      Logger()->warn("server {} marked dead after {} failures in a row (last: {}); tried again "
                     "every {} ms",
                     s.address.HostPort(), failures, why.ToString(),
                     options_.retry_timeout.count());
    } catch (...) {  // a log line that cannot be written changes nothing
    }
  }
}

void ServerPool::LogBack(const Server& s, std::uint32_t failures) const noexcept {
  try {
    Logger()->info("server {} answers again, after {} failures in a row", s.address.HostPort(),
                   failures);
  } catch (...) {  // a log line that cannot be written changes nothing
  }
}

void ServerPool::AppendHealth(std::vector<ServerHealth>* out) const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    const Server& s = *servers_[i];
    ServerHealth h;
    h.server = s.address.HostPort();
    h.requests = s.requests.load(kRelaxed);
    h.timeouts = s.timeouts.load(kRelaxed);
    h.unavailable = s.unavailable.load(kRelaxed);
    h.io_errors = s.io_errors.load(kRelaxed);
    h.protocol_errors = s.protocol_errors.load(kRelaxed);
    h.errors = h.timeouts + h.unavailable + h.io_errors + h.protocol_errors +
               s.other_errors.load(kRelaxed);
    h.connects = s.connects.load(kRelaxed);
    h.marked_dead = s.marked_dead.load(kRelaxed);
    h.consecutive_failures = s.failures.load(kRelaxed);
    // Dead from the failure that marked it until it answers again, rest over or not.
    h.dead = h.consecutive_failures > 0 && h.consecutive_failures >= options_.failure_limit;
    h.pool_timeouts = s.pool_waits_timed_out.load(kRelaxed);
    h.connections = s.open.load(kRelaxed);
    out->push_back(std::move(h));
  }
}

}  // namespace cachet::net
