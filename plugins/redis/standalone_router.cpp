// Routing over standalone servers: a distribution picks the server of each key.
#include "standalone_router.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "batch_exchange.h"
#include "mget_batch.h"
#include "redis_batch.h"

namespace cachet::redis {

namespace {

// One batch per server that `ops` route to, made by `make(server)` on first use;
// an operation whose key cannot be routed gets that status instead.
template <class Batch, class Make>
std::vector<std::unique_ptr<Batch>> SplitByServer(std::span<Operation> ops, net::ServerPool& pool,
                                                  Make make) {
  std::vector<std::unique_ptr<Batch>> batches(pool.size());
  if (pool.size() == 1 && !ops.empty()) {
    // With one server the route does not depend on the key (that server, or
    // its error when it is resting), so it is asked once for the whole batch.
    Result<std::size_t> server = pool.Route(ops.front().key);
    if (!server.ok()) {
      for (Operation& op : ops) op.status = server.status();
      return batches;
    }
    batches[*server] = make(*server);
    batches[*server]->Reserve(ops.size());
    for (Operation& op : ops) batches[*server]->Add(op);
    return batches;
  }
  for (Operation& op : ops) {
    Result<std::size_t> server = pool.Route(op.key);
    if (!server.ok()) {
      op.status = server.status();
      continue;
    }
    std::unique_ptr<Batch>& batch = batches[*server];
    if (!batch) batch = make(*server);
    batch->Add(op);
  }
  return batches;
}

}  // namespace

StandaloneRouter::StandaloneRouter(std::vector<net::ServerAddress> servers,
                                   net::DistributionKind distribution, net::ServerPoolOptions pool,
                                   const RedisSession& session, CounterMode counters)
    : session_(session),
      counters_(counters),
      pool_(servers, net::Distribution::Create(distribution, servers), pool) {
  where_.reserve(pool_.size());
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    where_.push_back(pool_.address(server).HostPort());
  }
}

Status StandaloneRouter::RunOnServer(std::size_t server, std::string_view request,
                                     const ReplyFn& on_reply) {
  net::ServerPool::Lease lease = pool_.Acquire(server);
  const std::string& where = where_[server];
  Status result;
  Status transport =
      session_.Exchange(lease.connection(), request, 1, lease->CallDeadline(),
                        [&](std::size_t, RespValue reply) { result = on_reply(reply, where); });
  pool_.Report(server, lease.connection(), transport);
  // A reply of the wrong kind for the command: the stream may be out of step.
  if (result.IsProtocolError()) lease->Close();
  return transport.ok() ? result : transport;
}

Status StandaloneRouter::RunOnKey(std::string_view key, std::string_view request,
                                  const ReplyFn& on_reply) {
  Result<std::size_t> server = pool_.Route(key);
  if (!server.ok()) return server.status();
  return RunOnServer(*server, request, on_reply);
}

Status StandaloneRouter::RunOnEachServer(std::string_view request, const EachServerFn& on_reply) {
  Status first;
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    std::string prefix = pool_.size() > 1 ? pool_.address(server).HostPort() + " " : "";
    Status s = RunOnServer(server, request, [&](RespValue reply, std::string_view where) {
      return on_reply(reply, where, prefix);
    });
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

void StandaloneRouter::RunBatch(std::span<Operation> ops, Backend& backend) {
  const bool only_reads = std::all_of(ops.begin(), ops.end(),
                                      [](const Operation& op) { return op.kind == OpKind::kGet; });
  if (only_reads && ops.size() > 1) {
    RunReads(ops);
    return;
  }
  auto batches = SplitByServer<RedisBatch>(ops, pool_, [&](std::size_t server) {
    return std::make_unique<RedisBatch>(where_[server], session_.settings().limits, counters_);
  });
  std::vector<BatchTarget> targets;
  for (std::size_t server = 0; server < batches.size(); ++server) {
    if (batches[server] && !batches[server]->empty()) {
      targets.push_back({&pool_, server, batches[server].get()});
    }
  }
  (void)RunBatches(targets, session_, pool_.CallDeadline());
  // Scripts the server had not cached yet run again one by one, which loads them.
  for (auto& batch : batches) {
    if (!batch) continue;
    for (Operation* op : batch->needs_script()) ExecuteOne(backend, *op);
  }
}

// A batch of reads: each server's keys in one MGET, all servers at once.
void StandaloneRouter::RunReads(std::span<Operation> ops) {
  auto batches = SplitByServer<MgetBatch>(ops, pool_, [&](std::size_t server) {
    return std::make_unique<MgetBatch>(where_[server], session_.settings().limits);
  });
  std::vector<BatchTarget> targets;
  for (std::size_t server = 0; server < batches.size(); ++server) {
    if (!batches[server] || batches[server]->empty()) continue;
    batches[server]->Seal();
    targets.push_back({&pool_, server, nullptr, batches[server].get()});
  }
  (void)RunBatches(targets, session_, pool_.CallDeadline());
}

}  // namespace cachet::redis
