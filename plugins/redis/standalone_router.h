// StandaloneRouter: keys placed on independent Redis servers by a distribution.
//
// A net::ServerPool holds the servers, their pooled connections and health; a
// key goes to the server its distribution (ketama by default) names, and a batch
// is split by server and sent to all of them at once (net::BatchRunner); a batch
// of gets only goes as one MGET per server (see mget_batch.h). Thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cachet/net/batch_runner.h"
#include "cachet/net/server_pool.h"
#include "command_router.h"
#include "redis_commands.h"
#include "redis_session.h"

namespace cachet::redis {

class StandaloneRouter final : public CommandRouter {
 public:
  // `session` must outlive the router. REQUIRES: servers is not empty.
  StandaloneRouter(std::vector<net::ServerAddress> servers, net::DistributionKind distribution,
                   net::ServerPoolOptions pool, const RedisSession& session, CounterMode counters);

  Status RunOnKey(std::string_view key, std::string_view request, const ReplyFn& on_reply) override;
  Status RunReadOnKey(std::string_view key, std::string_view request,
                      const ReplyFn& on_reply) override;
  Status RunOnEachServer(std::string_view request, const EachServerFn& on_reply) override;
  void RunBatch(std::span<Operation> ops, Backend& backend) override;
  void AppendHealth(std::vector<ServerHealth>* out) const override { pool_.AppendHealth(out); }

  // Sends `request` to `server`, resting or not (Sentinel confirms a master
  // this way), and hands its reply to `on_reply`, whose Status is the result.
  // A read (`repeatable`) may go twice: see net::CallServer.
  Status RunOnServer(std::size_t server, std::string_view request, const ReplyFn& on_reply,
                     net::Repeatable repeatable = net::Repeatable::kNo);

 private:
  // This thread's batch runner with `ops` in its servers' groups; an operation
  // whose key cannot be routed gets that status instead.
  net::BatchRunner& Group(std::span<Operation> ops);
  // A batch of gets only: one MGET per server instead of one GET per key.
  void RunReads(std::span<Operation> ops);
  // `server`'s batch of `group` in `*slot`: mixed operations, or MGET reads.
  // Null when nothing needs sending.
  net::ServerBatch* FillMixed(std::size_t server, std::span<Operation* const> group,
                              std::unique_ptr<net::ServerBatch>* slot) const;
  net::ServerBatch* FillReads(std::size_t server, std::span<Operation* const> group,
                              std::unique_ptr<net::ServerBatch>* slot) const;

  const RedisSession& session_;
  CounterMode counters_;
  net::ServerPool pool_;
  std::vector<std::string> where_;  // "host:port" of each server, for replies and errors
  const std::uint64_t id_ = net::BatchRunner::NewOwner();  // claims this thread's runner
};

}  // namespace cachet::redis
