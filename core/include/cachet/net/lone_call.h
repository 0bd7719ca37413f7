// CallServer: one request to one server outside a batch, by the engine's rules.
//
// A single operation, an admin command or a topology query is one exchange
// with one server. The store says what to send and how to read the replies
// (`exchange`, usually RunLoneExchange with the store's reader); the engine
// does for it what BatchRunner does for a batch, with one connection and no
// poll loop:
//
//   Status transport = net::CallServer(
//       pool, server, ServerPool::Use::kReadsReplies, start, deadline, setup,
//       [&](net::Connection& connection, net::Clock::time_point began) {
//         return net::RunLoneExchange(connection, request, count, reader, began, deadline);
//       });
//
//   - it leases a connection (ServerPool::Acquire); under max_connections the
//     wait counts in the call's deadline, and a wait that used it up sends
//     nothing and counts against no server (LateCall, or the pool's refusal);
//   - a connection that is not up is connected, and logged in with `setup`'s
//     login (null: none), before the exchange;
//   - the outcome (a failed connect or login, or the exchange's) goes to the
//     pool's one health rule (ServerPool::Report);
//   - a read (template argument `repeatable` kYes) sent on a pooled connection that the server
//     had closed before answering (ClosedUnanswered: its idle close crossing
//     the reuse) is sent once more on a new connection, and only that second
//     exchange counts for the server's health; `exchange` must then be able to
//     run again from the start;
//   - the connection goes back to the pool unless something closed it: any
//     failure of the exchange has (ExchangeState), an exception out of
//     `exchange` does (a reader's or a reply callback's), and so must the
//     store's `exchange` when a reply went through but left the stream out of
//     step (an error line after which nothing can be matched to its request).
//
// `start` is the clock reading `deadline` was computed from; `exchange` gets
// it back as `began`, or a fresh reading when a wait or a connect came first,
// so its first read's io_timeout counts from when the request went out.
// Returns how the call went: ok when the exchange went through, whatever the
// replies said (those are the store's, read by its reader). A store whose
// reply is read by a batch (a ServerBatch) calls RunAlone, below, instead.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "cachet/export.h"
#include "cachet/net/connection.h"
#include "cachet/net/exchange.h"
#include "cachet/net/fan_out.h"
#include "cachet/net/server_pool.h"
#include "cachet/status.h"

namespace cachet::net {

// Connects `connection` by `deadline` and runs `setup`'s login on it (none
// when `setup` is null or asks nothing). Any failure closes the connection.
CACHET_EXPORT Status ConnectAlone(Connection& connection, const ConnectionSetup* setup,
                                  Deadline deadline);

// `exchange` run once, closing the connection should it throw (replies may be
// left half read: never lent again).
template <class ExchangeFn>
inline Status GuardedExchange(Connection& connection, ExchangeFn& exchange,
                              Clock::time_point began) {
  try {
    return exchange(connection, began);
  } catch (...) {
    connection.Close();
    throw;
  }
}

// `repeatable` is a template argument: a write's call carries nothing of the resend.
template <Repeatable repeatable = Repeatable::kNo, class ExchangeFn>
inline Status CallServer(ServerPool& pool, std::size_t server, ServerPool::Use use,
                         Clock::time_point start, Deadline deadline, const ConnectionSetup* setup,
                         ExchangeFn&& exchange) {
  ServerPool::Lease lease = pool.Acquire(server, use, deadline);
  Connection& connection = lease.connection();
  // Under max_connections the lease may have waited: the exchange starts now,
  // or not at all when the wait used the call's time up. Then nothing is
  // sent, and no server is held to account.
  bool squeezed = false;
  if (pool.options().max_connections != 0) [[unlikely]] {
    if (connection.refused()) return connection.EnsureConnected();  // says why: all lent
    start = Clock::now();
    if (start >= deadline) return LateCall();
    squeezed = pool.Squeezed(lease.waited(), start, deadline);
  }
  const bool pooled = connection.connected();
  if (!pooled) [[unlikely]] {
    if (Status s = ConnectAlone(connection, setup, deadline); !s.ok()) {
      pool.Report(server, connection, s);
      return s;
    }
    start = Clock::now();
  }
  Status transport;
  if constexpr (repeatable == Repeatable::kYes) {
    const std::uint64_t heard = connection.buffer().received();
    transport = GuardedExchange(connection, exchange, start);
    if (pooled && ClosedUnanswered(transport, connection, heard)) [[unlikely]] {
      // Only with time left; a second try squeezed by the first is not the server's to fail.
      const Clock::time_point again = Clock::now();
      if (again >= deadline) return transport;  // an idle close: no health report
      squeezed = squeezed || pool.Squeezed(true, again, deadline);
      pool.NoteReconnect(server);
      if (Status s = ConnectAlone(connection, setup, deadline); !s.ok()) {
        if (!(squeezed && s.IsTimeout())) pool.Report(server, connection, s);
        return s;
      }
      transport = GuardedExchange(connection, exchange, Clock::now());
    }
  } else {
    transport = GuardedExchange(connection, exchange, start);
  }
  // A timeout closed the connection; with the time the wait left, it is not the server's.
  if (squeezed && transport.IsTimeout()) [[unlikely]]
    return transport;
  pool.Report(server, connection, transport);
  return transport;
}

// CallServer for a store's batch of one server (a ServerBatch, or any reader
// with Settle() and poisoned(), such as memcached's batch of one operation):
// `count` request pieces at `request` sent alone, the connection leased
// write-only when the batch expects no reply (done() before anything is
// sent, as BatchRunner leases it), closed after a reply that poisons the
// batch, and the outcome given to Settle().
//
// A batch that only reads (reads_only()) of at most kKeptPieces pieces may be
// sent twice (CallServer's rule): sending advances the pieces, so a second
// send starts from a copy.
inline constexpr int kKeptPieces = 4;

template <class Batch>
inline void RunAlone(ServerPool& pool, std::size_t server, iovec* request, int count, Batch& batch,
                     Clock::time_point start, Deadline deadline,
                     const ConnectionSetup* setup = nullptr) {
  const ServerPool::Use use =
      batch.done() ? ServerPool::Use::kWritesOnly : ServerPool::Use::kReadsReplies;
  auto exchange = [&](Connection& connection, Clock::time_point began) {
    Status s = RunLoneExchange(connection, request, count, batch, began, deadline);
    // A reply that leaves the stream out of step: the connection is not reused.
    if (batch.poisoned()) CloseOutOfStep(connection);
    return s;
  };
  if (!batch.reads_only() || count > kKeptPieces) {
    batch.Settle(CallServer(pool, server, use, start, deadline, setup, exchange));
    return;
  }
  iovec kept[kKeptPieces];
  std::copy_n(request, count, kept);
  bool again = false;
  batch.Settle(CallServer<Repeatable::kYes>(
      pool, server, use, start, deadline, setup,
      [&](Connection& connection, Clock::time_point began) {
        if (std::exchange(again, true)) [[unlikely]]
          std::copy_n(kept, count, request);
        return exchange(connection, began);
      }));
}

}  // namespace cachet::net
