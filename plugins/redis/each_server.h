// RunOnEachTarget: one command sent to several Redis servers at once (FLUSHDB,
// INFO to every server of a store, or every primary of a cluster), each reply
// handed to the caller's reader in the order the servers were given.
//
// The servers are asked through the engine (net::RunOnEach, batch_runner.h),
// so their connects, logins and round trips run at once and the call ends by
// one deadline, however many servers stall; each reply is kept whole until
// every exchange is over, then read in order. A resting server is not asked.
// RESP3 pushes around a reply go to the session's hook; a reply the reader
// finds of the wrong kind (protocol_error) closes its connection.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "cachet/net/server_pool.h"
#include "cachet/status.h"
#include "command_router.h"
#include "redis_session.h"

namespace cachet::redis {

// One server to ask: server `server` of `pool`, named `where` ("host:port").
struct ServerTarget {
  net::ServerPool* pool;
  std::size_t server;
  const std::string* where;  // borrowed, for the call
};

// Sends `request` to every target by `deadline` (a connection connected anew
// logs in with `session` first) and hands each reply to `on_reply`, in target
// order, with a "host:port " prefix when there are several targets ("" for
// one). Returns the first error, in target order: a resting server's, an
// exchange's, or the reader's.
Status RunOnEachTarget(std::span<const ServerTarget> targets, std::string_view request,
                       const RedisSession& session, net::Deadline deadline,
                       const CommandRouter::EachServerFn& on_reply);

}  // namespace cachet::redis
