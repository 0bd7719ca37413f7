// MemcachedBackend's single-operation path: one command built on the stack,
// sent alone, its reply read by the text reader every batch uses (TextBatch).
//
// A single get, set or incr is most of what applications send, and the batch
// machinery (per-thread scratch, per-server lists, a growable request, the poll
// loop's bookkeeping, a tokenizing parser) cost more than the round trip's own
// work. This path keeps every rule of the batch path: keys and sizes are checked
// first, the pool routes and keeps health, the exchange has the same deadline,
// and the reply is read by a TextBatch of one (TextBatch::ForOne), which takes
// the usual reply straight off the buffer and judges anything else as for a batch.
// It takes over only when the connection is already up; connecting, and the
// meta protocol, go through the batch machinery as before.
#include <utility>

#include "cachet/net/exchange.h"
#include "command_line.h"
#include "exptime.h"
#include "memcached_backend.h"
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

}  // namespace

// Checks and routes the operation, then runs its exchange on a pooled connection.
Status MemcachedBackend::RunOne(Operation& op, const BatchSettings& settings, Item* hit) {
  std::size_t server = 0;
  std::size_t home = 0;
  if (!CheckAndRoute(op, &server, &home)) return std::move(op.status);
  // Only with failover, around a dead server: the batch path, then a note.
  if (server != home) [[unlikely]]
    return RunOneAround(op, server, home, settings, hit);
  if (options_.protocol == Protocol::kText) {
    CommandLine line;
    AppendTextOperation(line, op, settings);
    // Keys are checked and values bounded, so a line always fits; should one
    // not, the batch path sends it.
    if (line.overflowed()) return RunBatchOfOne(op, server, settings, hit);
    // A text noreply write reads nothing back (see TextBatch).
    net::ServerPool::Lease lease = pool_.Acquire(
        server, op.noreply ? net::ServerPool::Use::kWritesOnly : net::ServerPool::Use::kReadsReplies);
    if (lease->refused()) [[unlikely]] {
      op.status = lease->EnsureConnected();  // max_connections stayed lent until the deadline
      return std::move(op.status);
    }
    // Connecting is the batch path's (FanOut connects to several servers at once).
    if (lease->connected()) {
      iovec request[3];
      const int pieces = line.Iovecs(request);
      TextBatch& reader = TextBatch::ForOne(op, hit, limits_);
      const net::Clock::time_point start = net::Clock::now();
      const net::Deadline deadline = start + call_timeout_;
      Status transport =
          net::RunLoneExchange(lease.connection(), request, pieces, reader, start, deadline);
      reader.Settle(transport);
      pool_.Report(server, lease.connection(), transport);
      if (reader.poisoned()) lease->Close();
      return std::move(op.status);
    }
  }
  return RunBatchOfOne(op, server, settings, hit);
}

}  // namespace cachet::memcached
