// MemcachedBackend's single-operation path: one command built on the stack,
// sent alone, its reply read by the reader every batch of its protocol uses
// (TextBatch, MetaBatch).
//
// A single get, set or incr is most of what applications send, and the batch
// machinery (per-thread scratch, per-server lists, a growable request, the poll
// loop's bookkeeping) cost more than the round trip's own work. This path keeps
// every rule of the batch path: keys and sizes are checked first, the pool
// routes (around a dead server too, with failover), the engine's lone call
// (net::RunAlone) leases, connects, runs the exchange by the same deadline and
// reports health, and the reply is read by a batch of one (TextBatch::ForOne,
// MetaBatch::ForOne), which judges every reply as for a batch; a connection
// that saw anything it cannot account for is closed.
#include <utility>

#include "cachet/net/lone_call.h"
#include "command_line.h"
#include "exptime.h"
#include "memcached_backend.h"
#include "meta_batch.h"
#include "meta_request.h"
#include "reply_status.h"
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

void MemcachedBackend::AfterUnusual(Operation& op, std::size_t home, std::size_t server) {
  if (server != home) NoteWriteAround(op, home, server);
  // The single path's reader is the thread's, shared by every server: an error
  // reply's status is named here, as a batch's reader names it (set_server).
  if (!op.status.ok()) {
    op.status = NamingServer(std::move(op.status), pool_.address(server).HostPort());
  }
}

// Checks and routes the operation, then runs its exchange on a pooled connection.
// Flattened: the whole call, engine steps and reader included, compiles as one function.
[[gnu::flatten]] Status MemcachedBackend::RunOne(Operation& op, const BatchSettings& settings,
                                                 Item* hit) {
  std::size_t server = 0;
  std::size_t home = 0;
  if (!CheckAndRoute(op, &server, &home)) return std::move(op.status);
  // One deadline for the whole call: the wait for a connection under
  // max_connections and the connect count in it.
  const net::Clock::time_point start = net::Clock::now();
  const net::Deadline deadline = start + call_timeout_;
  CommandLine line;
  if (options_.protocol == Protocol::kText) {
    AppendTextOperation(line, op, settings);
    // A text noreply write reads nothing back (see TextBatch): leased write-only.
    if (!line.overflowed()) [[likely]] {
      iovec request[3];
      const int pieces = line.Iovecs(request);
      net::RunAlone(pool_, server, request, pieces, TextBatch::ForOne(op, hit, limits_), start,
                    deadline);
    }
  } else {
    AppendMetaOne(line, op, settings);
    // A meta noreply write still reads its MN (see MetaBatch).
    if (!line.overflowed()) [[likely]] {
      iovec request[3];
      const int pieces = line.Iovecs(request);
      net::RunAlone(pool_, server, request, pieces, MetaBatch::ForOne(op, settings, hit, limits_),
                    start, deadline);
    }
  }
  // Keys are checked and values bounded, so a line always fits; should one
  // not, the batch path sends it.
  if (line.overflowed()) [[unlikely]]
    RunBatchOfOne(op, server, settings, hit, deadline);
  // Rare: a write around a dead server (failover) is noted again once it is
  // over, and an error from the server's reply names it.
  if ((server != home) | !op.status.ok()) [[unlikely]]
    AfterUnusual(op, home, server);
  return std::move(op.status);
}

}  // namespace cachet::memcached
