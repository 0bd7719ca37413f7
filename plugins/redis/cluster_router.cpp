// Following a Redis Cluster's redirections for single commands and batches.
#include "cluster_router.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "cachet/net/batch_runner.h"
#include "cachet/net/lone_call.h"
#include "each_server.h"
#include "redis_batch.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

constexpr std::size_t kNoNode = ClusterTopology::kNoNode;

Status NoNodeFor(std::uint16_t slot) {
  return Status::Unavailable("redis cluster: no node serves slot " + std::to_string(slot));
}

// ASKING, then the command: the node serves a migrating slot for this command.
std::string_view WithAsking(std::string_view request) {
  thread_local std::string buffer;
  buffer.clear();
  AppendCommand(&buffer, {"ASKING"});
  buffer.append(request);
  return buffer;
}

}  // namespace

ClusterRouter::ClusterRouter(ClusterSettings settings, net::ServerPoolOptions pool,
                             const RedisSession& session, CounterMode counters)
    : session_(session), counters_(counters), topology_(std::move(settings), pool, session) {}

void ClusterRouter::WaitBeforeRetry(std::uint32_t attempt, net::Deadline deadline) const {
  // Linear growth, capped at ten times the first wait: a short hiccup costs
  // little, and a long outage is bounded by max_redirects attempts and by the
  // call's deadline.
  const auto wait = topology_.settings().retry_wait * std::min<std::uint32_t>(attempt + 1, 10);
  std::this_thread::sleep_until(std::min(net::Clock::now() + wait, deadline));
}

ClusterRouter::Attempt ClusterRouter::RunOnNode(std::size_t node, std::string_view request,
                                                bool asking, net::Deadline deadline,
                                                const ReplyFn& on_reply) {
  Attempt attempt;
  // Inside a push hook nothing is sent, nor a connection opened for it.
  if (session_.InPushHook()) [[unlikely]] {
    attempt.status = RedisSession::PushHookRefusal(topology_.where(node));
    return attempt;
  }
  net::ServerPool& pool = topology_.pool(node);
  if (!pool.Available(0)) {
    attempt.status = pool.DeadServerError(0);
    attempt.unreachable = true;
    return attempt;
  }
  const std::string& where = topology_.where(node);
  bool asked = false;  // the request went out: a failure before says the node is unreachable
  Status transport = net::CallServer(
      pool, 0, net::ServerPool::Use::kReadsReplies, net::Clock::now(), deadline, &session_,
      [&](net::Connection& connection, net::Clock::time_point) {
        asked = true;
        Status s = session_.Run(connection, asking ? WithAsking(request) : request, asking ? 2 : 1,
                                deadline, [&](std::size_t index, RespValue reply) {
                                  if (asking && index == 0) return;  // ASKING's +OK
                                  if (reply.IsError())
                                    attempt.redirect = ClassifyClusterError(reply.text());
                                  if (attempt.redirect != ClusterErrorKind::kNone) {
                                    attempt.error = std::string(reply.text());
                                    return;
                                  }
                                  attempt.status = on_reply(reply, where);
                                });
        // A reply of the wrong kind for the command: the stream may be out of step.
        if (attempt.status.IsProtocolError()) connection.Close();
        return s;
      });
  if (!asked) {
    // Not connected. Wrong credentials say nothing about the node's health, and
    // retrying elsewhere would not help; nor does a call whose time is up
    // (waiting for a connection under max_connections).
    attempt.unreachable = !transport.IsAuthFailed() && net::Clock::now() < deadline;
    attempt.status = transport;
    return attempt;
  }
  if (!transport.ok()) {
    attempt.status = transport;
    attempt.redirect = ClusterErrorKind::kNone;
    topology_.RefreshIfIdle(deadline);
  }
  return attempt;
}

Status ClusterRouter::RunOnKey(std::string_view key, std::string_view request,
                               const ReplyFn& on_reply) {
  const std::uint16_t slot = KeySlot(key);
  const std::uint32_t attempts = std::max<std::uint32_t>(topology_.settings().max_redirects, 1);
  const net::Deadline deadline = CallDeadline();
  std::size_t ask_node = kNoNode;
  Status last;
  for (std::uint32_t attempt = 0; attempt < attempts; ++attempt) {
    std::size_t node = ask_node != kNoNode ? ask_node : topology_.NodeFor(slot);
    Status loaded;
    if (node == kNoNode) {
      loaded = topology_.Refresh(deadline);
      if (loaded.IsAuthFailed()) return loaded;
      node = topology_.NodeFor(slot);
    }
    // A node is asked only while the call has time left: an attempt begun past
    // the deadline would fail at once and count against a healthy node.
    if (net::Clock::now() >= deadline) {
      return Status::Timeout("redis cluster: slot " + std::to_string(slot) +
                             ": no answer within the request timeout after " +
                             std::to_string(attempt) + " attempts; last: " + last.ToString());
    }
    if (node == kNoNode) {
      last = loaded.ok() ? NoNodeFor(slot) : loaded;  // a failed reload says why
      WaitBeforeRetry(attempt, deadline);
      continue;
    }
    Attempt result = RunOnNode(node, request, ask_node != kNoNode, deadline, on_reply);
    ask_node = kNoNode;
    if (result.redirect == ClusterErrorKind::kNone) {
      if (!result.unreachable) return result.status;
      last = result.status;
      (void)topology_.Refresh(deadline);
      WaitBeforeRetry(attempt, deadline);
      continue;
    }
    const std::string& where = topology_.where(node);
    last = StatusFromError(result.error, where);
    if (result.redirect == ClusterErrorKind::kMoved || result.redirect == ClusterErrorKind::kAsk) {
      auto redirect = ParseRedirect(result.error, topology_.pool(node).address(0).host);
      if (!redirect) {
        return Status::ProtocolError("redis " + where + ": malformed redirection: " + result.error);
      }
      if (result.redirect == ClusterErrorKind::kAsk) {
        ask_node = topology_.NodeAt(redirect->node);
        topology_.Asked();
        continue;
      }
      topology_.Moved(redirect->slot, redirect->node);
      topology_.RefreshIfIdle(deadline);
      continue;
    }
    WaitBeforeRetry(attempt, deadline);  // TRYAGAIN, CLUSTERDOWN
  }
  return Status::Unavailable("redis cluster: slot " + std::to_string(slot) + ": gave up after " +
                             std::to_string(attempts) + " attempts; last: " + last.ToString());
}

Status ClusterRouter::RunOnEachServer(std::string_view request, const EachServerFn& on_reply) {
  const net::Deadline deadline = CallDeadline();
  std::vector<std::size_t> primaries = topology_.Primaries();
  if (primaries.empty()) {
    if (Status s = topology_.Refresh(deadline); !s.ok()) return s;
    primaries = topology_.Primaries();
  }
  // Each node is a pool of its own, of one server.
  std::vector<ServerTarget> targets;
  targets.reserve(primaries.size());
  for (std::size_t node : primaries) {
    targets.push_back({&topology_.pool(node), 0, &topology_.where(node)});
  }
  Status s = RunOnEachTarget(targets, request, session_, deadline, on_reply);
  // A primary that did not answer may have failed over: the map is reloaded.
  if (s.IsTimeout() || s.IsIoError() || s.IsUnavailable() || s.IsProtocolError()) {
    topology_.RefreshIfIdle(deadline);
  }
  return s;
}

std::vector<Operation*> ClusterRouter::RunRound(std::span<Operation* const> ops,
                                                std::vector<Operation*>* one_by_one,
                                                net::Deadline deadline) {
  // No round begins past the deadline: its exchanges would fail at once and
  // count against healthy nodes.
  if (net::Clock::now() >= deadline) {
    for (Operation* op : ops) {
      op->status = Status::Timeout("redis cluster: no answer within the request timeout");
    }
    return {};
  }
  std::vector<std::unique_ptr<RedisBatch>> batches;
  bool refreshed = false;
  for (Operation* op : ops) {
    const std::uint16_t slot = KeySlot(op->key);
    std::size_t node = topology_.NodeFor(slot);
    if (node == kNoNode && !refreshed) {
      refreshed = true;
      (void)topology_.Refresh(deadline);
      node = topology_.NodeFor(slot);
    }
    if (node == kNoNode) {
      op->status = NoNodeFor(slot);
      continue;
    }
    if (node >= batches.size()) batches.resize(node + 1);
    if (!batches[node]) {
      batches[node] = std::make_unique<RedisBatch>(
          topology_.where(node), session_.settings().limits, counters_, &session_);
    }
    batches[node]->Add(*op);
  }
  // Each node is a pool of its own, of one server.
  net::BatchRunner runner;
  for (std::size_t node = 0; node < batches.size(); ++node) {
    if (batches[node] && !batches[node]->empty()) {
      runner.Enlist(topology_.pool(node), 0, *batches[node]);
    }
  }
  if (!runner.Run(deadline, &session_)) {
    topology_.RefreshIfIdle(deadline);  // a node may have failed over
  }
  std::vector<Operation*> again;
  for (std::size_t node = 0; node < batches.size(); ++node) {
    if (!batches[node]) continue;
    for (Operation* op : batches[node]->needs_script()) one_by_one->push_back(op);
    for (const RedisBatch::Redirected& r : batches[node]->redirected()) {
      auto redirect = ParseRedirect(r.error, topology_.pool(node).address(0).host);
      if (ClassifyClusterError(r.error) == ClusterErrorKind::kMoved && redirect) {
        topology_.Moved(redirect->slot, redirect->node);
        again.push_back(r.op);
      } else {
        one_by_one->push_back(r.op);  // ASK, TRYAGAIN, CLUSTERDOWN: the single path
      }
    }
  }
  if (!again.empty()) topology_.RefreshIfIdle(deadline);
  return again;
}

void ClusterRouter::RunBatch(std::span<Operation> ops, Backend& backend) {
  std::vector<Operation*> pending;
  pending.reserve(ops.size());
  for (Operation& op : ops) pending.push_back(&op);
  std::vector<Operation*> one_by_one;
  const std::uint32_t rounds = std::max<std::uint32_t>(topology_.settings().max_redirects, 1);
  const net::Deadline deadline = CallDeadline();
  for (std::uint32_t round = 0; round < rounds && !pending.empty(); ++round) {
    pending = RunRound(pending, &one_by_one, deadline);
  }
  for (Operation* op : pending) {
    op->status = Status::Unavailable("redis cluster: slot " + std::to_string(KeySlot(op->key)) +
                                     " still moved after " + std::to_string(rounds) + " rounds");
  }
  for (Operation* op : one_by_one) ExecuteOne(backend, *op);
}

}  // namespace cachet::redis
