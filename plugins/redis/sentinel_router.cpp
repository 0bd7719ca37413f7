// Routing to the master Redis Sentinel names, and following it when it moves.
#include "sentinel_router.h"

#include <spdlog/logger.h>

#include <algorithm>
#include <utility>

#include "cachet/net/retry.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

// How often a master the sentinels name but that says it is a replica (a
// failover under way) is asked about (at least), and the first wait between
// (each further one grows: net::Attempts).
constexpr std::size_t kConfirmRounds = 3;
constexpr std::chrono::milliseconds kConfirmWait{100};
// The most time a discovery after a failed call adds to that call.
constexpr std::chrono::milliseconds kDiscoveryBudget{2000};

// A write refused by a node that is a replica now: the master moved.
bool IsReadOnly(const Status& s) {
  return s.IsInvalidArgument() && s.message().find(": READONLY") != std::string_view::npos;
}

// A failure that says the node may have moved or died.
bool MayHaveMoved(const Status& s) {
  return s.IsUnavailable() || s.IsIoError() || s.IsTimeout() || IsReadOnly(s);
}

// A failure before the command ran: refused, resting, or -READONLY. Sending it
// to a new master cannot run it twice.
bool NeverRan(const Status& s) { return s.IsUnavailable() || IsReadOnly(s); }

// What a call refused with -READONLY reports: the master is unavailable while
// it moves, whatever the old node's words.
Status ReadOnlyAsUnavailable(const Status& s) {
  return IsReadOnly(s) ? Status::Unavailable(std::string(s.message()) +
                                             " (the master moved; asking the sentinels again)")
                       : s;
}

}  // namespace

SentinelRouter::SentinelRouter(SentinelSettings settings, net::ServerPoolOptions pool,
                               const RedisSession& session, CounterMode counters)
    : settings_(std::move(settings)),
      pool_options_(pool),
      session_(session),
      counters_(counters),
      client_(settings_.sentinels, settings_.master, pool, settings_.session),
      discovery_(new Discovery(net::CurrentProcessId())) {
  if (settings_.watch) {
    WatcherSettings watch{settings_.sentinels, settings_.master, pool.connection,
                          settings_.session};
    watcher_ = std::make_unique<SentinelWatcher>(
        std::move(watch), [this] { (void)Rediscover(CallDeadline(), /*forced=*/true); },
        [this](std::size_t index, const Status& outcome) { client_.Report(index, outcome); });
  }
}

SentinelRouter::~SentinelRouter() {
  watcher_.reset();  // its thread may be discovering: it stops first
  Discovery* state = discovery_.load();
  // A forked child that never discovered still points at the parent's state,
  // whose mutex may be locked: it is left alone.
  if (state->pid == net::CurrentProcessId()) delete state;
}

SentinelRouter::Discovery& SentinelRouter::DiscoveryState() {
  const pid_t pid = net::CurrentProcessId();
  Discovery* state = discovery_.load(std::memory_order_acquire);
  while (state->pid != pid) {
    // A forked child's first discovery: the parent's state is not ours.
    auto fresh = std::make_unique<Discovery>(pid);
    if (discovery_.compare_exchange_weak(state, fresh.get(), std::memory_order_acq_rel)) {
      return *fresh.release();  // the parent's state stays allocated, unused
    }
    // Another thread of this child got there first (`state` is now its one).
  }
  return *state;
}

std::string SentinelRouter::MasterWhere() const {
  std::lock_guard lock(mutex_);
  return master_ ? master_address_.HostPort() : std::string();
}

std::string SentinelRouter::ReplicaWhere() const {
  std::lock_guard lock(mutex_);
  return replica_ ? replica_address_.HostPort() : std::string();
}

net::Deadline SentinelRouter::DiscoveryDeadline(net::Deadline call) const {
  const auto budget =
      std::min<net::Clock::duration>(pool_options_.connection.CallTimeout(), kDiscoveryBudget);
  return std::max(call, net::Clock::now() + budget);
}

SentinelRouter::Node SentinelRouter::Master(net::Deadline deadline, Status* why) {
  {
    std::lock_guard lock(mutex_);
    if (master_) return master_;
  }
  Status found = Rediscover(deadline, false);
  std::lock_guard lock(mutex_);
  if (!master_) {
    *why =
        found.ok()
            ? Status::Unavailable("redis sentinel: no master known for '" + settings_.master + "'")
            : found;
  }
  return master_;
}

SentinelRouter::Node SentinelRouter::Replica() const {
  std::lock_guard lock(mutex_);
  return replica_;
}

SentinelRouter::Node SentinelRouter::RouterFor(const net::ServerAddress& address) {
  {
    std::lock_guard lock(mutex_);
    if (master_ && master_address_ == address) return master_;
    if (replica_ && replica_address_ == address) return replica_;
  }
  return std::make_shared<StandaloneRouter>(std::vector<net::ServerAddress>{address},
                                            net::DistributionKind::kModula, pool_options_, session_,
                                            counters_);
}

Status SentinelRouter::Rediscover(net::Deadline deadline, bool forced) {
  const net::Clock::time_point asked = net::Clock::now();
  if (asked >= deadline) {
    return Status::Timeout("redis sentinel: no time left in the request to ask the sentinels");
  }
  Discovery& state = DiscoveryState();
  std::unique_lock lock(state.mutex, deadline);
  if (!lock.owns_lock()) {
    return Status::Timeout(
        "redis sentinel: the sentinels were still being asked when the request timeout ran out");
  }
  // Single flight: whoever waited for a discovery takes its outcome; a forced
  // caller (a +switch-master heard) only one that began after it asked, as one
  // begun before may have heard the sentinels before that failover.
  if ((forced ? state.last_started : state.last_finished) >= asked) return state.last_status;
  if (!forced && state.last_started != net::Clock::time_point{} &&
      net::Clock::now() - state.last_started < settings_.refresh_interval) {
    return state.last_status;
  }
  state.last_started = net::Clock::now();
  state.last_status = Discover(deadline);
  if (state.last_status.ok() && settings_.read_from_replica) DiscoverReplica(deadline);
  state.last_finished = net::Clock::now();
  return state.last_status;
}

Status SentinelRouter::AskRole(StandaloneRouter& node, bool (*role_is)(RespValue), bool* holds) {
  *holds = false;
  std::string request;
  AppendCommand(&request, {"ROLE"});
  // Asked even while it rests: a master back at its address is confirmed at once.
  return node.RunOnServer(0, request, [&](RespValue reply, std::string_view where) {
    if (reply.IsError()) return StatusFromError(reply.text(), where);
    *holds = role_is(reply);
    return Status::OK();
  });
}

Status SentinelRouter::Discover(net::Deadline deadline) {
  Status last = Status::Timeout("redis sentinel: no time was left to ask the sentinels");
  // A sentinel whose answer ROLE contradicts may lag behind a failover: the
  // next round, after a wait, asks the sentinel after it. Every sentinel gets its turn.
  const std::size_t sentinels = client_.sentinels().size();
  const auto rounds = static_cast<std::uint32_t>(std::max<std::size_t>(kConfirmRounds, sentinels));
  net::Attempts attempts({rounds, kConfirmWait}, deadline);
  std::size_t first = 0;
  // Named masters that did not answer ROLE in this discovery: asked once only.
  std::vector<net::ServerAddress> silent;
  while (attempts.Next()) {
    std::size_t answered = first;
    Result<net::ServerAddress> address = client_.MasterAddress(deadline, first, &answered);
    if (!address.ok()) return address.status();
    first = (answered + 1) % sentinels;
    if (std::find(silent.begin(), silent.end(), *address) != silent.end()) continue;
    Node node = RouterFor(*address);
    bool is_master = false;
    Status role = AskRole(*node, RoleIsMaster, &is_master);
    const std::string named = "redis sentinel: master '" + settings_.master + "' at " +
                              address->HostPort() + " (as the sentinels name it)";
    if (!role.ok()) {
      if (role.IsAuthFailed()) return role;
      // Unreachable: a sentinel that lags behind a failover may still name it,
      // so the next sentinel is asked at once; the same name is not tried again.
      last = Status::Unavailable(named + ": " + std::string(role.message()));
      silent.push_back(*address);
      continue;
    }
    if (is_master) {
      // The routers replaced are closed, and the switch logged, after the lock
      // is released: every call takes that lock.
      Node old_master, old_replica;
      bool switched = false;
      {
        std::lock_guard lock(mutex_);
        if (master_ != node) {
          old_master = std::exchange(master_, node);
          master_address_ = *address;
          if (replica_address_ == *address) old_replica = std::move(replica_);
          switched = true;
        }
      }
      // A move is news (info); the first discovery, which every process makes, is not.
      if (switched && settings_.logger) {
        settings_.logger->log(old_master ? spdlog::level::info : spdlog::level::debug,
                              "redis sentinel: master '{}' is at {}", settings_.master,
                              address->HostPort());
      }
      return Status::OK();
    }
    last = Status::Unavailable(named + " says it is not a master (a failover is under way)");
    attempts.Wait();
  }
  return last;
}

void SentinelRouter::DiscoverReplica(net::Deadline deadline) {
  Result<std::vector<net::ServerAddress>> replicas = client_.UsableReplicas(deadline);
  if (!replicas.ok()) return;  // keep the one in use; a failing read falls back to the master
  net::ServerAddress master;
  net::ServerAddress current;
  {
    std::lock_guard lock(mutex_);
    master = master_address_;
    current = replica_ ? replica_address_ : net::ServerAddress{};
  }
  // The one in use first, to keep its pooled connections.
  std::vector<const net::ServerAddress*> candidates;
  for (const net::ServerAddress& replica : *replicas) {
    if (replica == master) continue;
    if (replica == current) {
      candidates.insert(candidates.begin(), &replica);
    } else {
      candidates.push_back(&replica);
    }
  }
  // A node the sentinels still list may be a master now (promoted, or cut off
  // and written to), or a replica that lost its master: reads go to neither.
  const net::ServerAddress* chosen = nullptr;
  Node node;
  for (const net::ServerAddress* candidate : candidates) {
    if (net::Clock::now() >= deadline) break;
    Node asked = RouterFor(*candidate);
    bool connected_replica = false;
    if (AskRole(*asked, RoleIsConnectedReplica, &connected_replica).ok() && connected_replica) {
      chosen = candidate;
      node = std::move(asked);
      break;
    }
  }
  std::lock_guard lock(mutex_);
  replica_ = node;
  replica_address_ = chosen != nullptr ? *chosen : net::ServerAddress{};
}

Status SentinelRouter::AfterFailure(const Status& failed, net::Deadline deadline) {
  (void)Rediscover(DiscoveryDeadline(deadline), false);
  return ReadOnlyAsUnavailable(failed);
}

Status SentinelRouter::RunOnKey(std::string_view key, std::string_view request,
                                const ReplyFn& on_reply) {
  return RunOnMaster(key, request, on_reply, false);
}

Status SentinelRouter::RunOnMaster(std::string_view key, std::string_view request,
                                   const ReplyFn& on_reply, bool read) {
  const net::Deadline deadline = CallDeadline();
  Status why;
  Node master = Master(deadline, &why);
  if (!master) return why;
  auto run = [&](StandaloneRouter& node) {
    return read ? node.RunReadOnKey(key, request, on_reply) : node.RunOnKey(key, request, on_reply);
  };
  Status s = run(*master);
  if (!MayHaveMoved(s)) return s;
  Status failed = AfterFailure(s, deadline);
  if (NeverRan(s)) {
    // The sentinels named a new master: it gets the command, once.
    Node now = Master(DiscoveryDeadline(deadline), &why);
    if (now && now != master) return ReadOnlyAsUnavailable(run(*now));
  }
  return failed;
}

Status SentinelRouter::RunReadOnKey(std::string_view key, std::string_view request,
                                    const ReplyFn& on_reply) {
  if (!settings_.read_from_replica) return RunOnMaster(key, request, on_reply, true);
  const net::Deadline deadline = CallDeadline();
  Status why;
  if (!Master(deadline, &why)) return why;  // the first discovery finds the replicas too
  if (Node replica = Replica()) {
    Status s = replica->RunReadOnKey(key, request, on_reply);
    if (!MayHaveMoved(s)) return s;
    // A read may run twice: the master answers this one.
    (void)Rediscover(DiscoveryDeadline(deadline), false);
  }
  return RunOnMaster(key, request, on_reply, true);
}

Status SentinelRouter::RunOnEachServer(std::string_view request, const EachServerFn& on_reply) {
  const net::Deadline deadline = CallDeadline();
  Status why;
  Node master = Master(deadline, &why);
  if (!master) return why;
  Status s = master->RunOnEachServer(request, on_reply);
  return MayHaveMoved(s) ? AfterFailure(s, deadline) : s;
}

void SentinelRouter::RunBatch(std::span<Operation> ops, Backend& backend) {
  const net::Deadline deadline = CallDeadline();
  Status why;
  Node master = Master(deadline, &why);
  if (!master) {
    for (Operation& op : ops) op.status = why;
    return;
  }
  // A read for a CAS token is the master's: the cas after it compares there.
  const bool only_reads = std::all_of(ops.begin(), ops.end(), [](const Operation& op) {
    return op.kind == OpKind::kGet && !op.want_cas;
  });
  Node replica = settings_.read_from_replica && only_reads ? Replica() : nullptr;
  Node first = replica ? replica : master;
  first->RunBatch(ops, backend);

  // Operations to send again once the sentinels were asked: reads from a
  // replica that failed, and any the old master never ran.
  std::vector<Operation*> again;
  bool moved = false;
  for (Operation& op : ops) {
    if (!MayHaveMoved(op.status)) continue;
    moved = true;
    if (replica || NeverRan(op.status)) again.push_back(&op);
  }
  if (!moved) return;
  const net::Deadline discovery = DiscoveryDeadline(deadline);
  (void)Rediscover(discovery, false);
  Node target = Master(discovery, &why);
  if (!again.empty() && target && target != first) {
    std::vector<Operation> retry;
    retry.reserve(again.size());
    for (Operation* op : again) retry.push_back(std::move(*op));
    target->RunBatch(retry, backend);
    for (std::size_t i = 0; i < again.size(); ++i) *again[i] = std::move(retry[i]);
  }
  for (Operation& op : ops) op.status = ReadOnlyAsUnavailable(op.status);
}

void SentinelRouter::AppendHealth(std::vector<ServerHealth>* out) const {
  Node master, replica;
  {
    std::lock_guard lock(mutex_);
    master = master_;
    replica = replica_;
  }
  if (master) master->AppendHealth(out);
  if (replica) replica->AppendHealth(out);
  client_.AppendHealth(out);
}

}  // namespace cachet::redis
