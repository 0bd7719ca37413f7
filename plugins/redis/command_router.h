// CommandRouter: how a Redis command reaches the server that holds its key.
//
// RedisBackend encodes commands and maps replies; a router decides where they
// go. StandaloneRouter places keys on independent servers with a distribution
// (ketama, ...); ClusterRouter follows a Redis Cluster's slot map, MOVED and ASK;
// SentinelRouter follows the master Redis Sentinel names.
// The backend owns its router; a router must be safe to call from several
// threads at once.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/connection.h"
#include "function_ref.h"
#include "resp_reply.h"

namespace cachet::redis {

// The deadline of a batch whose operations run again one by one after it,
// through the backend (an ASK redirect, a script the server had not cached):
// while one is in scope on this thread, every call's deadline is capped by
// it (Cap), so a batch never runs past its request timeout in all.
class BatchDeadline {
 public:
  explicit BatchDeadline(net::Deadline deadline) : outer_(cap_) { cap_ = Cap(deadline); }
  ~BatchDeadline() { cap_ = outer_; }
  BatchDeadline(const BatchDeadline&) = delete;
  BatchDeadline& operator=(const BatchDeadline&) = delete;

  // `deadline`, or the batch's in scope when that comes first.
  static net::Deadline Cap(net::Deadline deadline) { return std::min(deadline, cap_); }

 private:
  // initial-exec: read on every call, without a call into the TLS resolver.
  static inline thread_local net::Deadline cap_ [[gnu::tls_model("initial-exec")]] =
      net::Deadline::max();
  net::Deadline outer_;
};

// Maps the one reply of a command to the call's Status. `where` is "host:port".
// A reference, called only while the router's call runs (see function_ref.h).
using ReplyFn = FunctionRef<Status(RespValue reply, std::string_view where)>;

class CommandRouter {
 public:
  CommandRouter() = default;
  CommandRouter(const CommandRouter&) = delete;
  CommandRouter& operator=(const CommandRouter&) = delete;
  virtual ~CommandRouter() = default;

  // Sends `request` (one command about `key`) to the server of `key` and hands
  // its reply to `on_reply`, whose Status is the result.
  virtual Status RunOnKey(std::string_view key, std::string_view request,
                          const ReplyFn& on_reply) = 0;

  // RunOnKey() for a command that only reads (GET): a router that can serve
  // reads elsewhere (a Sentinel replica) may send it there.
  virtual Status RunReadOnKey(std::string_view key, std::string_view request,
                              const ReplyFn& on_reply) {
    return RunOnKey(key, request, on_reply);
  }

  // Sends `request` to every server (every primary of a cluster) and hands
  // each reply to `on_reply`, in server order. `on_reply` gets a "host:port "
  // prefix for names when there are several servers, "" otherwise. The first
  // error, if any.
  using EachServerFn =
      FunctionRef<Status(RespValue reply, std::string_view where, const std::string& prefix)>;
  virtual Status RunOnEachServer(std::string_view request, const EachServerFn& on_reply) = 0;

  // Runs a batch of at most RedisBackend::kMaxInFlight operations per server,
  // filling each operation's status. `backend` runs the operations that must be
  // repeated one by one (a script the server had not cached, an ASK redirect).
  virtual void RunBatch(std::span<Operation> ops, Backend& backend) = 0;

  // Appends the health of every server (every node a cluster knows).
  virtual void AppendHealth(std::vector<ServerHealth>* out) const = 0;
};

}  // namespace cachet::redis
