// SentinelRouter: a master (and, for reads, a replica) found through Redis
// Sentinel, and followed when it moves.
//
// Commands go where a StandaloneRouter over one server sends them: the master
// the sentinels name (SENTINEL GET-MASTER-ADDR-BY-NAME, asked in order, see
// SentinelClient), once ROLE on it says "master"; a node that says otherwise is
// mid-failover, or the sentinel that named it lags behind one, and the next
// sentinel is asked (each in turn, at least three rounds 100 ms apart, within
// the call's deadline). Nothing is sent before the first call.
//
// Following a failover:
//   - a SentinelWatcher hears +switch-master and asks the sentinels at once;
//   - a call that finds the master down (refused, marked dead), lost (an I/O
//     error or a timeout) or read-only (-READONLY: it became a replica) asks
//     the sentinels again, at most once per `refresh_interval` across all
//     threads (one asks, the others take its answer), so a dead master does not
//     cause a storm of questions. That question gets time of its own (the
//     call's timeout, at most 2 s) when the failure used up the
//     call's: such a call may take that much longer than its timeout.
// A command the old master never ran (refused, or -READONLY) is sent once more
// when the answer names a new master; one that may have run (the connection
// was lost after sending) is returned as the error it is. Until the sentinels
// name a new master, calls fail with kUnavailable, never a miss.
//
// read_from = replica: single reads (Get) and batches of reads go to a replica
// the sentinels list as up and linked to its master (SENTINEL REPLICAS, asked
// with every discovery), and to the master when there is none or it fails.
// Replicas are asynchronous copies: a read there may not see the latest write.
//
// Fork-safe: a forked child asks the sentinels on its own (its own discovery
// state and connections), whatever the parent's threads were doing.
//
// Thread-safe. Routers of an old master are kept alive by the calls using them
// (shared_ptr), so a call in flight during a switch finishes on its own pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "command_router.h"
#include "redis_commands.h"
#include "redis_session.h"
#include "sentinel_client.h"
#include "sentinel_watcher.h"
#include "standalone_router.h"

namespace spdlog {
class logger;
}

namespace cachet::redis {

// The sentinels' session: their own credentials, named so in a refused login.
inline SessionSettings SentinelSession() {
  SessionSettings session;
  session.credentials_prefix = "sentinel_";
  return session;
}

struct SentinelSettings {
  std::vector<net::ServerAddress> sentinels;
  std::string master;                           // sentinel_master
  SessionSettings session = SentinelSession();  // for the sentinels: RESP2
  bool read_from_replica = false;  // read_from = replica
  // Least time between two discoveries prompted by failed calls.
  std::chrono::milliseconds refresh_interval{250};
  bool watch = true;                       // subscribe to +switch-master
  std::shared_ptr<spdlog::logger> logger;  // may be null: a switch is then not logged
};

class SentinelRouter final : public CommandRouter {
 public:
  // `session` (the data nodes') must outlive the router.
  SentinelRouter(SentinelSettings settings, net::ServerPoolOptions pool,
                 const RedisSession& session, CounterMode counters);
  ~SentinelRouter() override;

  Status RunOnKey(std::string_view key, std::string_view request, const ReplyFn& on_reply) override;
  Status RunReadOnKey(std::string_view key, std::string_view request,
                      const ReplyFn& on_reply) override;
  Status RunOnEachServer(std::string_view request, const EachServerFn& on_reply) override;
  void RunBatch(std::span<Operation> ops, Backend& backend) override;
  // The master's and the replica's health, then each sentinel's.
  void AppendHealth(std::vector<ServerHealth>* out) const override;

  // Asks the sentinels now unless a discovery finished since it was called (for
  // a `forced` call, a +switch-master: began since), `forced` also ignoring
  // refresh_interval. kOk when a master is known and confirmed by ROLE.
  Status Rediscover(net::Deadline deadline, bool forced);

  // "host:port" of the master in use, and of the replica serving reads; "" when
  // none is known.
  std::string MasterWhere() const;
  std::string ReplicaWhere() const;
  // True while the +switch-master subscription is live.
  bool Watching() const noexcept { return watcher_ != nullptr && watcher_->subscribed(); }

 private:
  using Node = std::shared_ptr<StandaloneRouter>;

  // The master's router, discovering it on first use; null with `*why` set
  // when there is none.
  Node Master(net::Deadline deadline, Status* why);
  Node Replica() const;
  // RunOnKey on the master, or RunReadOnKey when `read`; once more on a new
  // master the sentinels name when the first never ran.
  Status RunOnMaster(std::string_view key, std::string_view request, const ReplyFn& on_reply,
                     bool read);
  // A router for `address`: the current master's or replica's when it is the
  // same server (keeping its pooled connections), else a new one.
  Node RouterFor(const net::ServerAddress& address);
  // The sentinels' master, confirmed by ROLE; installs it when it is new.
  Status Discover(net::Deadline deadline);
  // Asks ROLE of `node`: *holds tells whether `role_is` (RoleIsMaster,
  // RoleIsConnectedReplica) holds for its answer; a failure to ask is returned.
  Status AskRole(StandaloneRouter& node, bool (*role_is)(RespValue), bool* holds);
  // The replica reads go to: one the sentinels list that says, asked ROLE, it is
  // a replica whose link to its master is up (the one in use first); none when
  // no listed node says so, and reads then go to the master.
  void DiscoverReplica(net::Deadline deadline);
  // After a call's failure that says the master may have moved: asks the
  // sentinels again (rate-limited) and returns the failure to report.
  Status AfterFailure(const Status& failed, net::Deadline deadline);
  net::Deadline CallDeadline() const {
    return BatchDeadline::Cap(net::Clock::now() + pool_options_.connection.CallTimeout());
  }
  // The deadline of a discovery prompted by a failed call: the call's, or, when
  // that leaves less, a fresh one of at most kDiscoveryBudget (2 s). A call that
  // timed out on a dark master has used its own time up, and that is exactly
  // when the sentinels must be asked.
  net::Deadline DiscoveryDeadline(net::Deadline call) const;

  const SentinelSettings settings_;
  const net::ServerPoolOptions pool_options_;
  const RedisSession& session_;
  const CounterMode counters_;
  SentinelClient client_;

  mutable std::mutex mutex_;  // guards the four below
  Node master_;
  net::ServerAddress master_address_;
  Node replica_;
  net::ServerAddress replica_address_;

  // Who is asking the sentinels, and the last answer. One per process: the
  // watcher thread holds `mutex` across network I/O, and a fork then would
  // leave it locked for good in the child, where that thread does not exist.
  struct Discovery {
    explicit Discovery(pid_t owner) : pid(owner) {}
    const pid_t pid;         // the process this state belongs to
    std::timed_mutex mutex;  // held while discovering; guards the three below
    net::Clock::time_point last_started{};
    net::Clock::time_point last_finished{};
    Status last_status;
  };
  // This process's discovery state: in a forked child, a fresh one (the
  // parent's is left as it is, never destroyed: its mutex may be locked).
  Discovery& DiscoveryState();
  std::atomic<Discovery*> discovery_;

  // Last: destroyed first, so its thread stops before the rest goes.
  std::unique_ptr<SentinelWatcher> watcher_;
};

}  // namespace cachet::redis
