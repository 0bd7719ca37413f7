// SentinelClient: asks Redis Sentinels where a monitored master and its
// replicas are.
//
// The sentinels are one net::ServerPool (so they share the transport, timeouts
// and health rule of every other connection), with a session of their own:
// `sentinel_username` / `sentinel_password` for AUTH, never the data nodes'
// credentials, and RESP2. A question goes to the sentinels in configured order;
// the first that answers is believed. A sentinel that is down, times out or
// answers an error is skipped, within the caller's deadline; one resting after
// failures (the pool's health rule) is skipped without being dialled.
//
// The reply readers are free functions, so they can be tested without a server.
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/net/server_pool.h"
#include "cachet/result.h"
#include "redis_session.h"
#include "resp_reply.h"

namespace cachet::redis {

// Reads SENTINEL GET-MASTER-ADDR-BY-NAME's reply: [ip, port]. kNotFound for a
// null (the sentinel monitors no master by that name); kProtocolError for any
// other shape. `where` names the sentinel in messages.
Result<net::ServerAddress> ReadMasterAddress(RespValue reply, std::string_view where);

// Reads SENTINEL REPLICAS' reply (one field/value list per replica) into the
// replicas that can serve reads: flags without s_down, o_down or disconnected,
// and master-link-status ok. kProtocolError for a reply of another shape.
Result<std::vector<net::ServerAddress>> ReadUsableReplicas(RespValue reply, std::string_view where);

// True when ROLE's reply says "master".
bool RoleIsMaster(RespValue reply);
// Whether a ROLE reply is a replica's whose link to its master is up
// ("slave", host, port, "connected", offset).
bool RoleIsConnectedReplica(RespValue reply);

// The new master's address in a +switch-master message
// ("<name> <old-ip> <old-port> <new-ip> <new-port>") when it is about `master`;
// kNotFound for another master's; kProtocolError when it does not parse.
Result<net::ServerAddress> ReadSwitchMaster(std::string_view message, std::string_view master);

class SentinelClient {
 public:
  // REQUIRES: sentinels not empty.
  SentinelClient(std::vector<net::ServerAddress> sentinels, std::string master,
                 net::ServerPoolOptions pool, SessionSettings session);

  // The master's address, from the first sentinel that knows it, by `deadline`,
  // asking from sentinel `first` on (in configured order, wrapping around);
  // `*answered`, when given, is set to the index of the sentinel believed.
  // kConfigError when every sentinel that answered monitors no master by that
  // name; kAuthFailed for refused credentials; kUnavailable (naming each
  // sentinel and why) when none answered; kTimeout when the deadline passed.
  Result<net::ServerAddress> MasterAddress(net::Deadline deadline, std::size_t first = 0,
                                           std::size_t* answered = nullptr);
  // The replicas that can serve reads, from the first sentinel that answers.
  Result<std::vector<net::ServerAddress>> UsableReplicas(net::Deadline deadline);

  const std::string& master_name() const noexcept { return master_; }
  const SessionSettings& session_settings() const noexcept { return session_.settings(); }
  const std::vector<net::ServerAddress>& sentinels() const noexcept { return sentinels_; }
  void AppendHealth(std::vector<ServerHealth>* out) const { pool_.AppendHealth(out); }
  // An outcome with sentinel `index` reached outside this client (the watcher's
  // subscription), counted by the pool's health rule as its own calls are.
  // Refused credentials count neither way, as in ServerPool::Report.
  void Report(std::size_t index, const Status& outcome) {
    if (outcome.IsAuthFailed()) return;
    if (outcome.ok()) {
      pool_.ReportSuccess(index);
    } else {
      pool_.ReportFailure(index, outcome);
    }
  }

 private:
  // Sends `request` to the sentinels in order, from `first` on, until `read`
  // accepts one's reply (its index goes to `*answered`); `read(reply, where)`
  // returns ok, or why that sentinel's answer is not taken.
  using ReadFn = FunctionRef<Status(RespValue reply, std::string_view where)>;
  Status AskInOrder(std::string_view request, net::Deadline deadline, const ReadFn& read,
                    std::size_t first = 0, std::size_t* answered = nullptr);

  const std::vector<net::ServerAddress> sentinels_;
  const std::string master_;
  const RedisSession session_;
  net::ServerPool pool_;
};

}  // namespace cachet::redis
