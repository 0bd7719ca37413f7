// The fan-out of a batch's per-server shares (see batch_exchange.h).
#include "batch_exchange.h"

#include <string>
#include <string_view>
#include <vector>

#include "cachet/net/fan_out.h"

namespace cachet::redis {

namespace {

net::Exchange MakeExchange(net::Connection& connection, const BatchTarget& target) {
  const std::string_view request =
      target.mget != nullptr ? target.mget->request() : std::string_view(target.batch->request());
  net::Exchange exchange;
  exchange.connection = &connection;
  exchange.request.push_back(iovec{const_cast<char*>(request.data()), request.size()});
  exchange.reader = target.mget != nullptr ? static_cast<net::ReplyReader*>(target.mget)
                                           : static_cast<net::ReplyReader*>(target.batch);
  return exchange;
}

void Settle(const BatchTarget& target, const Status& status) {
  if (target.mget != nullptr) {
    target.mget->Settle(status);
  } else {
    target.batch->Settle(status);
  }
}

}  // namespace

bool RunBatches(std::span<const BatchTarget> targets, const RedisSession& session,
                net::Deadline deadline) {
  bool all_ok = true;
  std::vector<net::ServerPool::Lease> leases;
  std::vector<net::Exchange> exchanges;
  std::vector<const BatchTarget*> running;
  leases.reserve(targets.size());
  // Every server's connect starts before any handshake waits on one, so a server
  // whose connect hangs does not hold the others back by its connect timeout.
  for (const BatchTarget& target : targets) {
    leases.push_back(
        target.pool->Acquire(target.server, net::ServerPool::Use::kReadsReplies, deadline));
    if (!leases.back()->connected()) (void)leases.back()->StartConnect(deadline);
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const BatchTarget& target = targets[i];
    net::Connection& connection = leases[i].connection();
    if (Status s = session.Prepare(connection, deadline); !s.ok()) {
      Settle(target, s);
      target.pool->Report(target.server, connection, s);
      all_ok = false;
      continue;
    }
    exchanges.push_back(MakeExchange(connection, target));
    running.push_back(&target);
  }
  if (!exchanges.empty()) net::RunExchanges(exchanges, deadline);
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    const BatchTarget& target = *running[i];
    Settle(target, exchanges[i].status);
    target.pool->Report(target.server, *exchanges[i].connection, exchanges[i].status);
    if (!exchanges[i].status.ok()) all_ok = false;
  }
  return all_ok;
}

}  // namespace cachet::redis
