// Routing over standalone servers: a distribution picks the server of each key.
#include "standalone_router.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "each_server.h"
#include "mget_batch.h"
#include "redis_batch.h"

namespace cachet::redis {

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
                                     const ReplyFn& on_reply, net::Repeatable repeatable) {
  const net::Clock::time_point start = net::Clock::now();
  const std::string& where = where_[server];
  return session_
      .Call(
          pool_, server, request, 1, start,
          BatchDeadline::Cap(start + pool_.options().connection.CallTimeout()),
          [&](std::size_t, RespValue reply) { return on_reply(reply, where); }, repeatable)
      .status();
}

Status StandaloneRouter::RunOnKey(std::string_view key, std::string_view request,
                                  const ReplyFn& on_reply) {
  Result<std::size_t> server = pool_.Route(key);
  if (!server.ok()) return server.status();
  return RunOnServer(*server, request, on_reply);
}

Status StandaloneRouter::RunReadOnKey(std::string_view key, std::string_view request,
                                      const ReplyFn& on_reply) {
  Result<std::size_t> server = pool_.Route(key);
  if (!server.ok()) return server.status();
  return RunOnServer(*server, request, on_reply, net::Repeatable::kYes);
}

Status StandaloneRouter::RunOnEachServer(std::string_view request, const EachServerFn& on_reply) {
  std::vector<ServerTarget> targets;
  targets.reserve(pool_.size());
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    targets.push_back({&pool_, server, &where_[server]});
  }
  return RunOnEachTarget(targets, request, session_, pool_.CallDeadline(), on_reply);
}

net::BatchRunner& StandaloneRouter::Group(std::span<Operation> ops) {
  // In the plugin, so that the plugin's code outlives the batches it holds.
  thread_local net::BatchRunner runner;
  runner.Claim(id_, pool_.size());
  if (pool_.size() == 1 && !ops.empty()) {
    // With one server the route does not depend on the key (that server, or
    // its error when it is resting), so it is asked once for the whole batch.
    Result<std::size_t> server = pool_.Route(ops.front().key);
    if (!server.ok()) {
      for (Operation& op : ops) op.status = server.status();
      return runner;
    }
    for (Operation& op : ops) runner.Add(*server, op);
    return runner;
  }
  for (Operation& op : ops) runner.AddRouted(pool_, op);
  return runner;
}

// Redis batches are made afresh for each call: the runner's slots hold them
// for the call only, and are emptied after it.
net::ServerBatch* StandaloneRouter::FillMixed(std::size_t server, std::span<Operation* const> group,
                                              std::unique_ptr<net::ServerBatch>* slot) const {
  auto batch = std::make_unique<RedisBatch>(where_[server], session_.settings().limits, counters_,
                                            &session_);
  batch->Reserve(group.size());
  for (Operation* op : group) batch->Add(*op);
  batch->Seal();
  // Operations settled at Add() (a counter delta Redis cannot take) send nothing.
  net::ServerBatch* send = batch->empty() ? nullptr : batch.get();
  *slot = std::move(batch);
  return send;
}

net::ServerBatch* StandaloneRouter::FillReads(std::size_t server, std::span<Operation* const> group,
                                              std::unique_ptr<net::ServerBatch>* slot) const {
  auto batch = std::make_unique<MgetBatch>(where_[server], session_.settings().limits, &session_);
  batch->Add(group);
  batch->Seal();
  *slot = std::move(batch);
  return slot->get();
}

void StandaloneRouter::RunBatch(std::span<Operation> ops, Backend& backend) {
  const bool only_reads = std::all_of(ops.begin(), ops.end(),
                                      [](const Operation& op) { return op.kind == OpKind::kGet; });
  if (only_reads && ops.size() > 1) {
    RunReads(ops);
    return;
  }
  net::BatchRunner& runner = Group(ops);
  runner.EnlistGroups(pool_, [&](std::size_t server, std::span<Operation* const> group,
                                 std::unique_ptr<net::ServerBatch>& slot) {
    return FillMixed(server, group, &slot);
  });
  const net::Deadline deadline = pool_.CallDeadline();
  (void)runner.Run(deadline, &session_);
  // Scripts the server had not cached yet run again one by one, which loads them.
  std::vector<Operation*> needs_script;
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    std::unique_ptr<net::ServerBatch>& slot = runner.slot(server);
    if (!slot) continue;
    const auto& again = static_cast<RedisBatch&>(*slot).needs_script();
    needs_script.insert(needs_script.end(), again.begin(), again.end());
    slot.reset();
  }
  const BatchDeadline within(deadline);
  for (Operation* op : needs_script) ExecuteOne(backend, *op);
}

// A batch of reads: each server's keys in one MGET, all servers at once.
void StandaloneRouter::RunReads(std::span<Operation> ops) {
  net::BatchRunner& runner = Group(ops);
  runner.EnlistGroups(pool_, [&](std::size_t server, std::span<Operation* const> group,
                                 std::unique_ptr<net::ServerBatch>& slot) {
    return FillReads(server, group, &slot);
  });
  (void)runner.Run(pool_.CallDeadline(), &session_);
  for (std::size_t server = 0; server < pool_.size(); ++server) runner.slot(server).reset();
}

}  // namespace cachet::redis
