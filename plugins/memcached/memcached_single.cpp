// MemcachedBackend's single-operation path: one command built on the stack,
// sent alone, its reply read by the reader every batch of its protocol uses
// (TextBatch, MetaBatch).
//
// A single get, set or incr is most of what applications send, and the batch
// machinery (per-thread scratch, per-server lists, a growable request, the poll
// loop's bookkeeping) cost more than the round trip's own work. This path keeps
// every rule of the batch path: keys and sizes are checked first, the pool
// routes and keeps health, the exchange has the same deadline, and the reply is
// read by a batch of one (TextBatch::ForOne, MetaBatch::ForOne), which judges
// every reply as for a batch; a connection that saw anything it cannot account
// for is closed. Both protocols share the one driver below (RanAlone). It takes
// over only when the connection is already up; connecting, and a key routed
// around a dead server, go through the batch machinery as before.
#include <utility>

#include "cachet/net/exchange.h"
#include "command_line.h"
#include "exptime.h"
#include "memcached_backend.h"
#include "meta_batch.h"
#include "meta_request.h"
#include "text_batch.h"
#include "text_request.h"

namespace cachet::memcached {

namespace {

// The text command of one operation, as TextBatch::Add writes it: a get is a
// retrieval line of its own key.
void AppendTextOperation(CommandLine& line, const Operation& op, const BatchSettings& settings) {
  if (op.kind != OpKind::kGet) {
    AppendTextUpdate(line, op);
    return;
  }
  BeginTextRetrieval(line, settings.touch_on_get,
                     settings.touch_on_get ? ExptimeFor(settings.get_touch_ttl) : 0);
  AppendTextKey(line, op.key);
  EndTextLine(line);
}

// The meta command of one operation, as MetaBatch::ExpectOne reads its reply:
// alone, or, for noreply, quiet and followed by mn.
void AppendMetaOne(CommandLine& line, const Operation& op, const BatchSettings& settings) {
  AppendMetaOperation(line, op, MetaBatch::OneTokens(op, settings), settings.touch_on_get,
                      settings.touch_on_get ? ExptimeFor(settings.get_touch_ttl) : 0);
  if (op.noreply) AppendMetaNoop(line);
}

}  // namespace

// The single-operation path of either protocol (memcached_backend.h), defined
// before RunOne so that it is inlined there.
template <class Reader>
[[gnu::always_inline]] inline bool MemcachedBackend::RanAlone(CommandLine& line, Operation& op,
                                                              std::size_t server,
                                                              bool reads_replies, Reader& reader,
                                                              net::Clock::time_point start,
                                                              net::Deadline deadline) {
  net::ServerPool::Lease lease = pool_.Acquire(
      server,
      reads_replies ? net::ServerPool::Use::kReadsReplies : net::ServerPool::Use::kWritesOnly,
      deadline);
  if (lease->refused()) [[unlikely]] {
    op.status = lease->EnsureConnected();  // max_connections stayed lent until the deadline
    return true;
  }
  // Connecting is the batch path's (FanOut connects to several servers at once).
  if (!lease->connected()) return false;
  // Under max_connections the lease may have waited: the exchange starts now,
  // or not at all when the wait used the call's time up (the server was asked nothing).
  if (bounded_pool_) [[unlikely]] {
    start = net::Clock::now();
    if (start >= deadline) {
      op.status = net::LateCall();
      return true;
    }
  }
  iovec request[3];
  const int pieces = line.Iovecs(request);
  Status transport =
      net::RunLoneExchange(lease.connection(), request, pieces, reader, start, deadline);
  reader.Settle(transport);
  pool_.Report(server, lease.connection(), transport);
  // An error line leaves the stream out of step: the connection is not reused.
  if (reader.poisoned()) lease->Close();
  return true;
}

// Checks and routes the operation, then runs its exchange on a pooled connection.
Status MemcachedBackend::RunOne(Operation& op, const BatchSettings& settings, Item* hit) {
  std::size_t server = 0;
  std::size_t home = 0;
  if (!CheckAndRoute(op, &server, &home)) return std::move(op.status);
  // Only with failover, around a dead server: the batch path, then a note.
  if (server != home) [[unlikely]]
    return RunOneAround(op, server, home, settings, hit);
  // One deadline for the whole call: the wait for a connection under
  // max_connections, and the batch path if this one cannot run, count in it.
  const net::Clock::time_point start = net::Clock::now();
  const net::Deadline deadline = start + call_timeout_;
  CommandLine line;
  bool ran = false;
  // Keys are checked and values bounded, so a line always fits; should one
  // not, the batch path sends it.
  if (options_.protocol == Protocol::kText) {
    AppendTextOperation(line, op, settings);
    // A text noreply write reads nothing back (see TextBatch).
    ran = !line.overflowed() &&
          RanAlone(line, op, server, !op.noreply, TextBatch::ForOne(op, hit, limits_), start,
                   deadline);
  } else {
    AppendMetaOne(line, op, settings);
    // A meta noreply write still reads its MN (see MetaBatch).
    ran = !line.overflowed() &&
          RanAlone(line, op, server, true, MetaBatch::ForOne(op, settings, hit, limits_), start,
                   deadline);
  }
  if (ran) return std::move(op.status);
  return RunBatchOfOne(op, server, settings, hit, deadline);
}

}  // namespace cachet::memcached
