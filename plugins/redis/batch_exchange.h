// Sending the per-server shares of a pipelined batch to all their servers at once.
//
// Each share is a RedisBatch (its request and its reply reader) bound for one
// server of a net::ServerPool. RunBatches connects and prepares each connection
// (the Redis handshake, which net::RunExchanges has no hook for), then runs all
// exchanges together, settles every share with its exchange's outcome (a dead
// server makes its operations errors, never misses) and reports each server's
// health to its pool. Used by both the standalone and the cluster router.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>

#include "cachet/net/server_pool.h"
#include "mget_batch.h"
#include "redis_batch.h"
#include "redis_session.h"

namespace cachet::redis {

// One server's share: a mixed batch, or (standalone reads only) an MGET.
struct BatchTarget {
  net::ServerPool* pool = nullptr;  // borrowed
  std::size_t server = 0;           // index in `pool`
  RedisBatch* batch = nullptr;      // borrowed; not empty; or null when `mget` is set
  MgetBatch* mget = nullptr;        // borrowed; sealed, not empty
};

// True when every exchange completed (whatever the replies said); false when at
// least one server failed to connect, timed out or sent a malformed reply.
// `deadline` is the call's end.
bool RunBatches(std::span<const BatchTarget> targets, const RedisSession& session,
                net::Deadline deadline);

}  // namespace cachet::redis
