// ServerPool: the servers of one store, where keys go, and their connections.
//
// Holds the servers (with weights) and a Distribution that places keys on them,
// a small pool of idle connections per server so threads sharing one Backend each
// get their own socket (and, through a spare slot per thread, get the same one
// back each time, without a lock), and each server's health: after `failure_limit`
// consecutive failures a server is dead for `retry_timeout`, then tried again.
//
// `max_connections` bounds the connections open to one server at once (0: no
// bound). A thread that finds them all lent waits for one until its call's
// deadline, then gets a stand-in whose connect fails with kTimeout
// (Connection::RefuseConnects), which Report() does not count against the server.
//
// A pooled connection is checked before it is lent again: one that received
// bytes while idle (a reply nobody asked for) or that the server closed (an idle
// timeout, a restart) is closed, and the borrower connects anew. A connection
// the server closed while it sat in the pool says nothing about the server's
// health, so such a failure is not counted (Report).
// With `failover`, keys of a dead server go to the next live server of the ring;
// without it (the default, so a key never silently moves), they fail with
// kUnavailable.
//
// The pool also keeps each server's health figures (requests, errors by kind,
// connects, times marked dead) for Backend::ServerHealth: AppendHealth reports them.
//
// Thread-safe: every method may be called from several threads at once. A Lease
// must not outlive its pool.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/health.h"
#include "cachet/net/connection.h"
#include "cachet/net/distribution.h"
#include "cachet/net/endpoint.h"
#include "cachet/net/server_trace.h"
#include "cachet/result.h"
#include "cachet/thread_number.h"

namespace cachet::net {

struct ServerPoolOptions {
  ConnectionOptions connection;
  std::uint32_t failure_limit = 2;                // consecutive failures before dead
  std::chrono::milliseconds retry_timeout{2000};  // how long a dead server rests
  bool failover = false;                          // route around dead servers
  std::size_t failover_max_keys = 10000;          // keys noted per dead server (Failover)
  std::size_t pool_size = 16;                     // idle connections kept per server
  std::size_t max_connections = 0;                // open at once per server; 0: no bound
};

// The outcome of a call whose wait for a connection (under max_connections)
// used its time up: nothing was sent, and no server is held to account for it.
inline Status LateCall() {
  return Status::Timeout("the call's deadline passed before its request could be sent");
}

// How many times this process closed a connection that had served earlier
// calls (reused()) for bytes it could not account for: a protocol error (a reply
// too many, of the wrong kind, garbage), a reply nobody asked for that arrived
// while it was idle, or a batch's poisoned() reply. An answer read on it before
// the fault showed may have been another request's (a protocol that pairs replies
// by position cannot tell), so what keeps answers (the near cache) drops them
// when this moves. A server's close is no fault, nor is anything on a connection
// made for the call (no earlier answer came over it).
CACHET_EXPORT std::uint64_t StreamFaults() noexcept;
// Counts one stream fault. The pool counts what it sees (Report's protocol
// errors, the idle check) and CloseOutOfStep() what a batch finds; a store that
// finds one elsewhere on a reused connection calls this.
CACHET_EXPORT void NoteStreamFault() noexcept;

// Closes a connection whose stream is out of step (a batch's poisoned()), with
// a stream fault when it had served earlier calls.
inline void CloseOutOfStep(Connection& connection) noexcept {
  if (connection.reused()) NoteStreamFault();
  connection.Close();
}

class CACHET_EXPORT ServerPool {
 public:
  // REQUIRES: servers not empty; `distribution` was built for `servers`.
  ServerPool(std::vector<ServerAddress> servers, std::unique_ptr<Distribution> distribution,
             ServerPoolOptions options);
  ~ServerPool();
  ServerPool(const ServerPool&) = delete;
  ServerPool& operator=(const ServerPool&) = delete;

  std::size_t size() const noexcept { return servers_.size(); }
  const ServerAddress& address(std::size_t server) const { return servers_[server]->address; }
  const ServerPoolOptions& options() const noexcept { return options_; }
  // The end of a call that begins now: its request timeout from now.
  Deadline CallDeadline() const { return Clock::now() + options_.connection.CallTimeout(); }

  // The server that serves `key` now: its own if alive, else (with failover) the
  // next live one. kUnavailable naming the server otherwise. `*home_out`, if
  // given, is set to the key's own server, alive or not.
  Result<std::size_t> Route(std::string_view key, std::size_t* home_out = nullptr) const;

  // With failover: the next live server for `key` other than `server`, as if
  // `server` were dead; for a store that keeps a server that is back out of
  // routing until it has repaired it. kUnavailable when there is none.
  Result<std::size_t> RouteAround(std::string_view key, std::size_t server) const;

  // False while a server rests after failure_limit consecutive failures.
  // Inline: every operation asks, and a server under the limit is the usual answer.
  bool Available(std::size_t server) const noexcept {
    const Server& s = *servers_[server];
    return s.failures.load(std::memory_order_relaxed) < options_.failure_limit || RestOver(s);
  }
  // kUnavailable naming a resting server and when it is retried.
  Status DeadServerError(std::size_t server) const;

 private:
  struct Server;  // one server's connections and health (below)

 public:
  // A connection of one server, borrowed; it returns to the pool when the Lease
  // ends if it is still connected (Close() it after any error so it is dropped).
  class CACHET_EXPORT Lease {
   public:
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&& other) noexcept = delete;
    // Inline: the usual return is one compare-exchange into the thread's spare slot.
    ~Lease() {
      if (!connection_) return;  // moved from
      // The usual return: the connection takes the thread's spare slot, which
      // is empty. Anything else is Return()'s.
      Connection* empty = nullptr;
      // A thread waiting for a connection is given this one (Return), in turn.
      if (spare_ != nullptr && connection_->connected() &&
          home_->waiters.load(std::memory_order_relaxed) == 0 &&
          spare_->compare_exchange_strong(empty, connection_.get(), std::memory_order_seq_cst))
          [[likely]] {
        connection_.release();
        // seq_cst, paired with TakeAnySpare's: a waiter either sees this
        // connection or is counted here.
        if (home_->waiters.load(std::memory_order_seq_cst) != 0) [[unlikely]]
          WakeWaiter(*home_);
        return;
      }
      pool_->Return(*this);
    }
    Connection& connection() noexcept { return *connection_; }
    Connection* operator->() noexcept { return connection_.get(); }
    std::size_t server() const noexcept { return server_; }
    // Lent after waiting for a connection to come back (max_connections).
    bool waited() const noexcept { return waited_; }

   private:
    bool waited_ = false;  // lent after waiting for a connection under max_connections
    friend class ServerPool;
    Lease(ServerPool* pool, Server* home, std::size_t server, std::atomic<Connection*>* spare,
          std::unique_ptr<Connection> connection)
        : pool_(pool),
          home_(home),
          server_(server),
          spare_(spare),
          connection_(std::move(connection)) {}
    ServerPool* pool_;
    Server* home_;  // the pool's record of server_
    std::size_t server_;
    // The borrowing thread's spare slot, where the connection goes back; null
    // with pool_size 0 (nothing is kept).
    std::atomic<Connection*>* spare_;
    std::unique_ptr<Connection> connection_;
  };

  // What the borrower's exchange does: reads replies (the usual), or only
  // writes (memcached text noreply), which lets a busy connection skip the
  // idle check (Connection::QuietForWritesOnly).
  enum class Use : std::uint8_t { kReadsReplies, kWritesOnly };

  // A pooled connection to `server` that nothing disturbed while it was idle
  // (Connection::reused() is then true), or a new, unconnected one. With
  // max_connections reached, waits until `deadline` (a call's timeout from now
  // when none is given) for one to come back, then lends a refusing stand-in.
  // Inline, for the usual borrow: the thread's own connection, from its spare
  // slot (which never holds a refusing stand-in), for an exchange that reads
  // replies. Anything else is AcquireOther()'s.
  Lease Acquire(std::size_t server, Use use = Use::kReadsReplies, Deadline deadline = {}) {
    Server& s = *servers_[server];
    const std::size_t number = ThreadNumber(ThreadNumbering::kConnectionPools);
    std::atomic<Connection*>& spare = s.spares[number & spare_mask_].connection;
    // With pool_size 0 nothing is kept: the lease drops its connection.
    std::atomic<Connection*>* const home_slot = options_.pool_size != 0 ? &spare : nullptr;
    Connection* c = spare.exchange(nullptr, std::memory_order_acquire);
    if (c == nullptr || use != Use::kReadsReplies) [[unlikely]]
      return AcquireOther(s, server, home_slot, c, use, deadline);
    // Whatever arrived while it was idle is nobody's reply; the borrower then
    // connects anew instead of reading it as the answer to its request.
    if (c->QuietSinceLastUse()) [[likely]] {
      c->MarkReused();
    } else {
      DropStale(s, *c);
    }
    return Lease(this, &s, server, home_slot, std::unique_ptr<Connection>(c));
  }

  // The one health rule, called by whoever used a connection of `server` with
  // the outcome of its exchange (`transport`: ok, or why the exchange failed).
  // A refusal, timeout, I/O or protocol error counts against the server, except
  // an I/O error on a connection that was reused (the server closed it while it
  // was idle), and an I/O or protocol error of a request the server refused (it
  // answered before it took all of it); wrong credentials count neither way;
  // anything else counts for it.
  // Every report counts as one request of the server's health figures.
  // Inline for the usual success.
  void Report(std::size_t server, const Connection& used, const Status& transport) noexcept {
    Server& s = *servers_[server];
    s.requests.fetch_add(1, std::memory_order_relaxed);
    if (ServerTraceOn()) NoteServer(s.address);
    if (transport.ok()) return ResetFailures(s);
    ReportNotOk(server, used, transport);
  }
  // Whether a call that `waited` for a connection (under max_connections, any
  // of a batch's) was left, from `start`, less than io_timeout: a timeout of its
  // exchange is then the wait's, and is not reported against the server.
  bool Squeezed(bool waited, Clock::time_point start, Deadline deadline) const noexcept {
    return waited && deadline - start < options_.connection.io_timeout;
  }
  // The two halves of Report: a success resets the failure count; a failure adds
  // one (`why`: its status, for the log line of a server marked dead).
  void ReportSuccess(std::size_t server) noexcept { ResetFailures(*servers_[server]); }
  void ReportFailure(std::size_t server, const Status& why = Status::OK()) noexcept;

  // Counts a connect the lease did not: a read sent again on a new connection
  // after its pooled one was closed unanswered (CallServer, BatchRunner).
  void NoteReconnect(std::size_t server) noexcept {
    servers_[server]->connects.fetch_add(1, std::memory_order_relaxed);
  }

  // Appends one ServerHealth per server, in configuration order.
  void AppendHealth(std::vector<ServerHealth>* out) const;
  // Threads waiting for a connection of `server` now (under max_connections).
  std::size_t Waiting(std::size_t server) const noexcept {
    return servers_[server]->waiters.load(std::memory_order_relaxed);
  }

 private:
  // Spare slots per server: a thread's is its number (cachet/thread_number.h:
  // live threads hold different ones) modulo the slots in use, the power of
  // two at most pool_size and at most this; threads numbered alike share one.
  static constexpr std::size_t kSpareSlots = 32;
  struct alignas(64) SpareSlot {
    std::atomic<Connection*> connection{nullptr};
  };
  // A thread waiting in IdleOrNew, until it is handed a connection, or a place
  // under the bound to open one, or its deadline passes.
  struct Waiter {
    std::unique_ptr<Connection> handed;
    bool may_open = false;  // the connection it waited for was dropped: `open` counts its own
    std::condition_variable turn;
  };
  struct Server {
    explicit Server(ServerAddress a) : address(std::move(a)) {}
    ~Server() {
      for (SpareSlot& slot : spares) delete slot.connection.load();
    }
    ServerAddress address;
    // Idle connections (owned) outside the mutex, one slot per thread (threads
    // beyond kSpareSlots share): a thread's steady acquire is an exchange and its
    // release a compare-exchange, both on its own line, and it gets its own
    // connection back.
    std::array<SpareSlot, kSpareSlots> spares;
    std::atomic<std::uint32_t> waiters{0};  // queue's length, read outside the mutex
    std::mutex mutex;                       // guards idle, open, queue
    // At most pool_size - 1. A return fills an empty slot without looking here,
    // so list and slots together may hold up to the slots' count minus one
    // beyond pool_size until a return finds its slot taken.
    std::vector<std::unique_ptr<Connection>> idle;
    std::atomic<std::size_t> open{0};  // connections that exist (changed under mutex)
    // Threads waiting for a connection under max_connections, first come first
    // served: what a lease gives back goes to the first of them, not to
    // whichever thread asks next, so no waiter is passed over until its
    // deadline by threads that keep taking the connection back.
    std::deque<Waiter*> queue;
    std::atomic<std::uint32_t> failures{0};
    std::atomic<std::int64_t> dead_until_ns{0};  // steady clock
    // Health figures (ServerHealth), apart from what the hot path touches.
    alignas(64) std::atomic<std::uint64_t> requests{0};
    std::atomic<std::uint64_t> timeouts{0};
    std::atomic<std::uint64_t> unavailable{0};
    std::atomic<std::uint64_t> io_errors{0};
    std::atomic<std::uint64_t> protocol_errors{0};
    std::atomic<std::uint64_t> other_errors{0};
    std::atomic<std::uint64_t> connects{0};
    std::atomic<std::uint64_t> marked_dead{0};
    std::atomic<std::uint64_t> pool_waits_timed_out{0};
  };

  // Available() of a server at its failure limit: whether its rest is over.
  static bool RestOver(const Server& s) noexcept;
  // A success's part of the health rule: the server's failures start over.
  void ResetFailures(Server& s) noexcept {
    const std::uint32_t failures = s.failures.load(std::memory_order_relaxed);
    if (failures == 0) [[likely]]
      return;
    s.failures.store(0, std::memory_order_relaxed);
    if (failures >= options_.failure_limit) LogBack(s, failures);
  }
  // Logs that a server marked dead answers again (info).
  void LogBack(const Server& s, std::uint32_t failures) const noexcept;
  // ~Lease() of a connection that does not go into an empty spare slot: one
  // that is closed, kept by no slot (pool_size 0) or given back while threads
  // wait goes to Release(); else it takes the slot, and the connection it finds
  // there goes to Release().
  void Return(Lease& lease) noexcept;
  // Hands a connection a spare slot could not take to the first waiting
  // thread, or keeps it in the idle list, or drops it (its place under the
  // bound then going to the first waiting thread).
  void Release(std::size_t server, std::unique_ptr<Connection> connection);
  // Gives the first waiting thread `connection`, or (null) a place under the
  // bound to open one. REQUIRES: s.mutex held, s.queue not empty.
  static void HandToFirst(Server& s, std::unique_ptr<Connection> connection);
  // Gives up a place under the bound: to the first waiting thread, or uncounted.
  static void GiveUpPlace(Server& s);
  // A new connection in a place under the bound the caller holds; should it not
  // be made (out of memory), the place is given up before the exception goes on.
  Connection* OpenInPlace(Server& s);
  // Connections in spare slots now (a count that may be stale as it is made).
  static std::size_t SparesHeld(const Server& s) noexcept;
  // Acquire() when the thread's spare slot is empty: an idle connection (from
  // the list or another thread's slot), a new one if the bound allows, or
  // (after waiting until `deadline`) a refusing stand-in.
  // Sets *waited when it had to wait for a connection to come back.
  Connection* IdleOrNew(Server& s, Deadline deadline, bool* waited);
  // Any connection in a spare slot, or null.
  static Connection* TakeAnySpare(Server& s) noexcept;
  // After a spare slot was filled while threads wait: hands what the slots
  // hold to them, in turn.
  static void WakeWaiter(Server& s);
  // WakeWaiter's work. REQUIRES: s.mutex held.
  static void HandOutSpares(Server& s);
  // Acquire() of a connection for a write-only exchange, or when the thread's
  // spare slot is empty (`c` null): an idle connection, a new one, or a
  // refusing stand-in (IdleOrNew), checked as Acquire() checks.
  Lease AcquireOther(Server& s, std::size_t server, std::atomic<Connection*>* home_slot,
                     Connection* c, Use use, Deadline deadline);
  // Acquire() of a connection that was not quiet while idle: it is closed, so
  // the borrower connects anew.
  static void DropStale(Server& s, Connection& connection) noexcept;
  // Report() of an exchange that did not go through.
  void ReportNotOk(std::size_t server, const Connection& used, const Status& transport) noexcept;

  std::vector<std::unique_ptr<Server>> servers_;
  std::unique_ptr<Distribution> distribution_;
  ServerPoolOptions options_;
  std::size_t spare_mask_;  // spare slots in use, minus one
};

}  // namespace cachet::net
