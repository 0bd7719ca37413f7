// ClusterRouter: commands and batches over a Redis Cluster.
//
// A key goes to the primary serving its slot (ClusterTopology). Replies that
// redirect are followed here and never reach the caller:
//   MOVED        the slot map is updated, a reload is started if none runs, and
//                the command is sent again to the new node;
//   ASK          ASKING and the command go to the named node, once, with no map
//                change (the slot is being migrated);
//   TRYAGAIN,    the command is sent again after a short wait that grows with
//   CLUSTERDOWN  each attempt;
//   a node that cannot be reached: the map is reloaded and the command retried
//                (nothing was sent, so retrying is safe).
// Every command gets at most `max_redirects` attempts. A failure after the
// request was sent (a timeout, a dropped connection) is returned as it is, since
// the command may have run; the map is reloaded, time permitting, for later calls.
// A batch is split by node and sent to every node at once. Operations that come
// back MOVED, or whose node could not be reached (nothing sent; the map is
// reloaded first, within refresh_interval), go again in a further round; ASK
// and retries run one by one. The count and pace of attempts are the engine's
// (net::Attempts, retry.h): `max_redirects` tries, `retry_wait` apart, growing. Batches never send multi-key commands, so CROSSSLOT cannot happen.
// Thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cachet/net/retry.h"
#include "cluster_topology.h"
#include "command_router.h"
#include "redis_commands.h"
#include "redis_session.h"

namespace cachet::redis {

class ClusterRouter final : public CommandRouter {
 public:
  // `session` must outlive the router.
  ClusterRouter(ClusterSettings settings, net::ServerPoolOptions pool, const RedisSession& session,
                CounterMode counters);

  Status RunOnKey(std::string_view key, std::string_view request, const ReplyFn& on_reply) override;
  Status RunReadOnKey(std::string_view key, std::string_view request,
                      const ReplyFn& on_reply) override;
  Status RunOnEachServer(std::string_view request, const EachServerFn& on_reply) override;
  void RunBatch(std::span<Operation> ops, Backend& backend) override;
  void AppendHealth(std::vector<ServerHealth>* out) const override { topology_.AppendHealth(out); }

  ClusterTopology& topology() noexcept { return topology_; }

 private:
  // What one attempt on one node came to.
  struct Attempt {
    Status status;  // the reply's Status, or the transport failure
    ClusterErrorKind redirect = ClusterErrorKind::kNone;
    std::string error;         // the redirecting error's text
    bool unreachable = false;  // failed before anything was sent
  };
  // RunOnKey and RunReadOnKey: a read (`repeatable`) may go twice to a node,
  // see net::CallServer.
  Status Run(std::string_view key, std::string_view request, const ReplyFn& on_reply,
             net::Repeatable repeatable);
  Attempt RunOnNode(std::size_t node, std::string_view request, bool asking, net::Deadline deadline,
                    const ReplyFn& on_reply, net::Repeatable repeatable);
  // The settings' count of attempts (max_redirects) and first wait (retry_wait).
  net::RetryPolicy Retries() const;
  // One round of a batch; returns the operations to send again: those
  // answered MOVED, and those of a node that could not be reached (nothing
  // was sent), after which `*wait` is set: the next round waits first.
  std::vector<Operation*> RunRound(std::span<Operation* const> ops,
                                   std::vector<Operation*>* one_by_one, net::Deadline deadline,
                                   bool* wait);
  // The end of a call that begins now (its request timeout, or its batch's end).
  net::Deadline CallDeadline() const {
    return BatchDeadline::Cap(net::Clock::now() +
                              topology_.pool_options().connection.CallTimeout());
  }

  const RedisSession& session_;
  CounterMode counters_;
  ClusterTopology topology_;
};

}  // namespace cachet::redis
