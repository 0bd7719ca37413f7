// Following a Redis Cluster's redirections for single commands and batches.
#include "cluster_router.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "cachet/net/batch_runner.h"
#include "cachet/net/retry.h"
#include "each_server.h"
#include "redis_batch.h"
#include "redis_replies.h"
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
  AppendCommand(&buffer, {"PING"});  // closes the pipeline, as RedisBatch::Seal does
  return buffer;
}

// Of a node's deferred operations (redirected, or answered NOSCRIPT), those
// after which it ran a write to the same key, so that run later they would land
// after it, out of the batch's order (the slot changed hands, or the node came
// back from CLUSTERDOWN, in the middle of the pipeline). `answered` is the
// node's request in order, as far as its replies were read.
std::unordered_set<const Operation*> Overtaken(const RedisBatch& batch) {
  const std::span<Operation* const> answered = batch.answered();
  std::unordered_set<const Operation*> deferred(batch.needs_script().begin(),
                                                batch.needs_script().end());
  for (const RedisBatch::Redirected& r : batch.redirected()) deferred.insert(r.op);
  // A key's last write the node ran: a later read changed nothing.
  std::unordered_map<std::string_view, std::size_t> last_write;
  for (std::size_t i = 0; i < answered.size(); ++i) {
    const Operation* op = answered[i];
    if (op != nullptr && op->kind != OpKind::kGet && !deferred.contains(op)) {
      last_write[op->key] = i;
    }
  }
  std::unordered_set<const Operation*> overtaken;
  for (std::size_t i = 0; i < answered.size(); ++i) {
    const Operation* op = answered[i];
    if (op == nullptr || !deferred.contains(op)) continue;
    const auto later = last_write.find(op->key);
    if (later != last_write.end() && later->second > i) overtaken.insert(op);
  }
  return overtaken;
}

// The outcome of a deferred operation Overtaken() found: not applied, not run again.
Status OvertakenError(std::string_view reply) {
  return Status::Unavailable(
      "redis cluster: answered " + std::string(reply) +
      ", then a later write of the batch to this key ran; not sent again, so the batch's "
      "order holds (a slot changed hands mid-pipeline)");
}

// An operation for a later round must not overtake an earlier one of its slot
// left for the single path (ASK, TRYAGAIN, CLUSTERDOWN, NOSCRIPT): it joins
// that one there, so writes to a key keep the batch's order. Operations are
// elements of one array, so their addresses give that order.
void JoinEarlierDeferred(std::vector<Operation*>& one_by_one, std::vector<Operation*>* pending) {
  if (one_by_one.empty() || pending->empty()) return;
  std::unordered_map<std::uint16_t, const Operation*> first_deferred;
  for (const Operation* op : one_by_one) {
    auto [at, added] = first_deferred.emplace(KeySlot(op->key), op);
    if (!added && std::less<const Operation*>()(op, at->second)) at->second = op;
  }
  std::vector<Operation*> next_round;
  for (Operation* op : *pending) {
    const auto found = first_deferred.find(KeySlot(op->key));
    const bool behind =
        found != first_deferred.end() && std::less<const Operation*>()(found->second, op);
    (behind ? one_by_one : next_round).push_back(op);
  }
  *pending = std::move(next_round);
}

// ASKING's answer: OK, or an error the command after it gets too.
Status ReadAskingOk(RespValue reply, std::string_view where) {
  if (reply.IsError() || (reply.type() == RespType::kSimpleString && reply.text() == "OK")) {
    return Status::OK();
  }
  return Status::ProtocolError("redis " + std::string(where) + ": ASKING answered other than OK");
}

}  // namespace

ClusterRouter::ClusterRouter(ClusterSettings settings, net::ServerPoolOptions pool,
                             const RedisSession& session, CounterMode counters)
    : session_(session), counters_(counters), topology_(std::move(settings), pool, session) {}

net::RetryPolicy ClusterRouter::Retries() const {
  return {topology_.settings().max_redirects, topology_.settings().retry_wait};
}

ClusterRouter::Attempt ClusterRouter::RunOnNode(std::size_t node, std::string_view request,
                                                bool asking, net::Deadline deadline,
                                                const ReplyFn& on_reply,
                                                net::Repeatable repeatable) {
  Attempt attempt;
  net::ServerPool& pool = topology_.pool(node);
  if (!pool.Available(0)) {
    attempt.status = pool.DeadServerError(0);
    attempt.unreachable = true;
    return attempt;
  }
  const std::string& where = topology_.where(node);
  // The command's reply: a redirection is noted for the caller to follow.
  auto settle = [&](RespValue reply) {
    if (reply.IsError()) attempt.redirect = ClassifyClusterError(reply.text());
    if (attempt.redirect != ClusterErrorKind::kNone) {
      attempt.error = std::string(reply.text());
      return Status::OK();
    }
    return on_reply(reply, where);
  };
  Status answer;  // the command's, which the closing PING's reply must not replace
  CallOutcome call = session_.Call(
      pool, 0, asking ? WithAsking(request) : request, asking ? 3 : 1, net::Clock::now(), deadline,
      [&](std::size_t index, RespValue reply) {
        if (!asking) return settle(reply);
        if (index == 0) return ReadAskingOk(reply, where);
        if (index == 1) {
          answer = settle(reply);
          return answer;
        }
        Status pong = ReadClosingPong(reply, where, "an ASKING call");
        return pong.ok() ? std::move(answer) : pong;
      },
      repeatable);
  Status transport = std::move(call.transport);
  attempt.status = std::move(call.reply);
  if (!call.sent) {
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
  return Run(key, request, on_reply, net::Repeatable::kNo);
}

Status ClusterRouter::RunReadOnKey(std::string_view key, std::string_view request,
                                   const ReplyFn& on_reply) {
  return Run(key, request, on_reply, net::Repeatable::kYes);
}

Status ClusterRouter::Run(std::string_view key, std::string_view request, const ReplyFn& on_reply,
                          net::Repeatable repeatable) {
  // Inside a push hook nothing is sent, nor the slot map loaded: refused, not retried.
  if (session_.InPushHook()) [[unlikely]]
    return RedisSession::PushHookRefusal("cluster");
  const std::uint16_t slot = KeySlot(key);
  const net::Deadline deadline = CallDeadline();
  net::Attempts attempts(Retries(), deadline);
  std::size_t ask_node = kNoNode;
  Status last = NoNodeFor(slot);
  while (attempts.Next()) {
    std::size_t node = ask_node != kNoNode ? ask_node : topology_.NodeFor(slot);
    if (node == kNoNode) {
      Status loaded = topology_.Refresh(deadline);
      // Wrong credentials, or slot maps no retry would read: said at once.
      if (loaded.IsAuthFailed() || loaded.IsProtocolError()) return loaded;
      node = topology_.NodeFor(slot);
      if (node == kNoNode) {
        last = loaded.ok() ? NoNodeFor(slot) : loaded;  // a failed reload says why
        attempts.Wait();
        continue;
      }
    }
    // A node is asked only while the call has time left: an attempt begun past
    // the deadline would fail at once and count against a healthy node.
    if (net::Clock::now() >= deadline) break;
    Attempt result =
        RunOnNode(node, request, ask_node != kNoNode, deadline, on_reply, repeatable);
    ask_node = kNoNode;
    if (result.redirect == ClusterErrorKind::kNone) {
      if (!result.unreachable) return result.status;
      // Nothing was sent: the slot may have a new node.
      last = result.status;
      (void)topology_.Refresh(deadline);
      attempts.Wait();
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
    attempts.Wait();  // TRYAGAIN, CLUSTERDOWN
  }
  return attempts.GiveUp("redis cluster: slot " + std::to_string(slot), last);
}

Status ClusterRouter::RunOnEachServer(std::string_view request, const EachServerFn& on_reply) {
  const net::Deadline deadline = CallDeadline();
  // Reloaded first (at most once per refresh_interval): a primary added since
  // the last load (a reshard onto a new node) would otherwise be left out, and
  // a flush would report done with its keys still there.
  const Status loaded = topology_.Refresh(deadline);
  std::vector<std::size_t> primaries = topology_.Primaries();
  if (primaries.empty()) {
    return loaded.ok() ? Status::Unavailable("redis cluster: no primary is known") : loaded;
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
                                                net::Deadline deadline, bool* wait) {
  std::vector<std::unique_ptr<RedisBatch>> batches;
  std::vector<std::vector<Operation*>> routed;  // per node: what its request holds
  bool refreshed = false;
  Status loaded;
  for (Operation* op : ops) {
    const std::uint16_t slot = KeySlot(op->key);
    std::size_t node = topology_.NodeFor(slot);
    if (node == kNoNode && !refreshed) {
      refreshed = true;
      loaded = topology_.Refresh(deadline);
      node = topology_.NodeFor(slot);
    }
    if (node == kNoNode) {
      // Wrong credentials, or slot maps no retry would read, as the single path says.
      op->status = loaded.IsAuthFailed() || loaded.IsProtocolError() ? loaded : NoNodeFor(slot);
      continue;
    }
    if (node >= batches.size()) {
      batches.resize(node + 1);
      routed.resize(node + 1);
    }
    if (!batches[node]) {
      batches[node] = std::make_unique<RedisBatch>(
          topology_.where(node), session_.settings().limits, counters_, &session_);
    }
    // An operation settled at Add() (nothing to send) keeps its outcome.
    if (batches[node]->Add(*op)) routed[node].push_back(op);
  }
  // Each node is a pool of its own, of one server.
  net::BatchRunner runner;
  std::vector<std::size_t> enlisted;  // the node of each exchange
  for (std::size_t node = 0; node < batches.size(); ++node) {
    if (batches[node] && !batches[node]->empty()) {
      batches[node]->Seal();
      runner.Enlist(topology_.pool(node), 0, *batches[node]);
      enlisted.push_back(node);
    }
  }
  bool unreachable = false;
  const bool all_ok = runner.Run(deadline, &session_);
  std::vector<Operation*> again;
  for (std::size_t i = 0; i < enlisted.size(); ++i) {
    const Status& outcome = runner.status(i);
    // Nothing was sent (the connect, handshake or login failed): the slot may
    // have a new node, so these go again. Wrong credentials would fail
    // anywhere, and a call out of time goes nowhere.
    const std::vector<Operation*>& asked = routed[enlisted[i]];
    if (!outcome.ok() && !runner.sent(i) && !outcome.IsAuthFailed() && !asked.empty() &&
        net::Clock::now() < deadline) {
      unreachable = true;
      again.insert(again.end(), asked.begin(), asked.end());
    }
  }
  for (std::size_t node = 0; node < batches.size(); ++node) {
    if (!batches[node]) continue;
    const RedisBatch& batch = *batches[node];
    const std::unordered_set<const Operation*> overtaken =
        batch.redirected().empty() && batch.needs_script().empty()
            ? std::unordered_set<const Operation*>()
            : Overtaken(batch);
    for (Operation* op : batch.needs_script()) {
      if (overtaken.contains(op)) {
        op->status = OvertakenError("NOSCRIPT");
      } else {
        one_by_one->push_back(op);
      }
    }
    for (const RedisBatch::Redirected& r : batch.redirected()) {
      if (overtaken.contains(r.op)) {
        r.op->status = OvertakenError(r.error);
        continue;
      }
      auto redirect = ParseRedirect(r.error, topology_.pool(node).address(0).host);
      if (ClassifyClusterError(r.error) == ClusterErrorKind::kMoved && redirect) {
        topology_.Moved(redirect->slot, redirect->node);
        again.push_back(r.op);
      } else {
        one_by_one->push_back(r.op);  // ASK, TRYAGAIN, CLUSTERDOWN: the single path
      }
    }
  }
  if (unreachable) {
    // The single path's rule: reload (at most once per refresh_interval), wait, retry.
    (void)topology_.Refresh(deadline);
    *wait = true;
  } else if (!all_ok || !again.empty()) {
    topology_.RefreshIfIdle(deadline);  // a node may have failed over, or slots moved
  }
  return again;
}

void ClusterRouter::RunBatch(std::span<Operation> ops, Backend& backend) {
  std::vector<Operation*> pending;
  pending.reserve(ops.size());
  for (Operation& op : ops) pending.push_back(&op);
  std::vector<Operation*> one_by_one;
  const net::Deadline deadline = CallDeadline();
  net::Attempts rounds(Retries(), deadline);
  while (!pending.empty() && rounds.Next()) {
    bool wait = false;  // a node could not be reached: the next round waits first
    pending = RunRound(pending, &one_by_one, deadline, &wait);
    JoinEarlierDeferred(one_by_one, &pending);
    if (wait) rounds.Wait();
  }
  // Still moved, or a node still unreachable, when the rounds or the time ran out.
  for (Operation* op : pending) {
    const std::string what = "redis cluster: slot " + std::to_string(KeySlot(op->key));
    op->status = rounds.GiveUp(what, op->status);
  }
  // In the batch's order, within the batch's time: each ends by its deadline.
  std::sort(one_by_one.begin(), one_by_one.end(), std::less<const Operation*>());
  const BatchDeadline within(deadline);
  for (Operation* op : one_by_one) {
    if (net::Clock::now() < deadline) {
      ExecuteOne(backend, *op);
    } else {
      op->status = Status::Timeout("redis cluster: slot " + std::to_string(KeySlot(op->key)) +
                                   ": the batch's request timeout ran out before this key's "
                                   "retry; last: " + op->status.ToString());
    }
  }
}

}  // namespace cachet::redis
