// RedisBackend: each operation is one command (redis_commands.h) and one reply
// mapping (redis_replies.h); batches are pipelined per server through RedisBatch.
#include "redis_backend.h"

#include <algorithm>
#include <memory>
#include <string>

#include "cachet/net/fan_out.h"
#include "redis_batch.h"
#include "redis_commands.h"
#include "redis_replies.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

// One request buffer per thread, reused by every call.
std::string& RequestBuffer() {
  thread_local std::string buffer;
  buffer.clear();
  return buffer;
}

bool IsNoScript(const Status& s) {
  return s.IsInvalidArgument() && s.message().find("NOSCRIPT") != std::string_view::npos;
}

}  // namespace

RedisBackend::RedisBackend(RedisOptions options)
    : options_(std::move(options)),
      session_(options_.session),
      pool_(options_.servers, net::Distribution::Create(options_.distribution, options_.servers),
            options_.pool) {}

Status RedisBackend::RunOnServer(std::size_t server, std::string_view request,
                                 const ReplyFn& on_reply) {
  net::ServerPool::Lease lease = pool_.Acquire(server);
  std::string where = pool_.address(server).HostPort();
  Status result;
  Status transport =
      session_.Exchange(lease.connection(), request, 1,
                        [&](std::size_t, RespValue reply) { result = on_reply(reply, where); });
  // Wrong credentials say nothing about the server's health.
  if (!transport.ok() && !transport.IsAuthFailed()) {
    pool_.ReportFailure(server);
    return transport;
  }
  pool_.ReportSuccess(server);
  return transport.ok() ? result : transport;
}

Status RedisBackend::RunOnKey(std::string_view key, std::string_view request,
                              const ReplyFn& on_reply) {
  Result<std::size_t> server = pool_.Route(key);
  if (!server.ok()) return server.status();
  return RunOnServer(*server, request, on_reply);
}

Status RedisBackend::Get(std::string_view key, Item* out) {
  std::string& request = RequestBuffer();
  AppendGet(&request, key);
  return RunOnKey(key, request, [out](RespValue reply, std::string_view where) {
    return ReadValue(reply, where, out);
  });
}

Status RedisBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                           const WriteOptions& options) {
  if (mode == StoreMode::kAppend || mode == StoreMode::kPrepend) {
    return RunScript(mode, key, item.value);
  }
  if (mode == StoreMode::kCas) return UnsupportedOperation("cas");
  std::string& request = RequestBuffer();
  AppendSet(&request, mode, key, item.value, options.ttl);
  return RunOnKey(key, request, ReadStored);
}

Status RedisBackend::RunScript(StoreMode mode, std::string_view key, std::string_view value) {
  auto on_reply = [](RespValue reply, std::string_view where) {
    return ReadOneOrZero(reply, where, Status::NotStored());
  };
  std::string& request = RequestBuffer();
  AppendScript(&request, mode, key, value, false);
  Status s = RunOnKey(key, request, on_reply);
  if (!IsNoScript(s)) return s;
  // The server does not know the script yet (first use, restart, SCRIPT FLUSH):
  // EVAL sends it in full and caches it for the next EVALSHA.
  std::string& retry = RequestBuffer();
  AppendScript(&retry, mode, key, value, true);
  return RunOnKey(key, retry, on_reply);
}

Status RedisBackend::Remove(std::string_view key) {
  std::string& request = RequestBuffer();
  AppendDel(&request, key);
  return RunOnKey(key, request, [](RespValue reply, std::string_view where) {
    return ReadOneOrZero(reply, where, Status::NotFound());
  });
}

Status RedisBackend::Counter(bool increment, std::string_view key, std::uint64_t delta,
                             std::uint64_t* value) {
  if (options_.counters == CounterMode::kNative) {
    if (Status s = CheckCounterDelta(delta); !s.ok()) return s;
  }
  auto on_reply = [value](RespValue reply, std::string_view where) {
    return ReadCounter(reply, where, value);
  };
  std::string& request = RequestBuffer();
  AppendCounter(&request, options_.counters, increment, key, delta, false);
  Status s = RunOnKey(key, request, on_reply);
  if (!IsNoScript(s)) return s;
  std::string& retry = RequestBuffer();
  AppendCounter(&retry, options_.counters, increment, key, delta, true);
  return RunOnKey(key, retry, on_reply);
}

Status RedisBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter(true, key, delta, value);
}

Status RedisBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter(false, key, delta, value);
}

Status RedisBackend::Touch(std::string_view key, Ttl ttl) {
  std::string& request = RequestBuffer();
  AppendTouch(&request, key, ttl);
  return RunOnKey(key, request, [ttl](RespValue reply, std::string_view where) {
    if (ttl.count() > 0) return ReadOneOrZero(reply, where, Status::NotFound());
    return reply.IsNull() ? Status::NotFound() : ReadNotError(reply, where);
  });
}

Status RedisBackend::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  std::string& request = RequestBuffer();
  AppendGetAndTouch(&request, key, ttl);
  return RunOnKey(key, request, [out](RespValue reply, std::string_view where) {
    return ReadValue(reply, where, out);
  });
}

Status RedisBackend::Flush() {
  Status first;
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    std::string& request = RequestBuffer();
    RespCommand(&request, 1).Arg("FLUSHDB");
    Status s = RunOnServer(server, request, ReadNotError);
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

namespace {

// INFO's "name:value" lines into `out`; section headers start with '#'.
void AddInfoLines(std::string_view text, const std::string& prefix, StatsMap* out) {
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t colon = line.find(':');
    if (line.empty() || line.front() == '#' || colon == std::string_view::npos) continue;
    out->emplace_back(prefix + std::string(line.substr(0, colon)),
                      std::string(line.substr(colon + 1)));
  }
}

}  // namespace

Status RedisBackend::Stats(StatsMap* out) {
  out->clear();
  Status first;
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    std::string prefix = pool_.size() > 1 ? pool_.address(server).HostPort() + " " : "";
    std::string& request = RequestBuffer();
    RespCommand(&request, 1).Arg("INFO");
    Status s = RunOnServer(server, request, [&](RespValue reply, std::string_view where) {
      if (!reply.IsString()) return ReadNotError(reply, where);
      AddInfoLines(reply.text(), prefix, out);
      return Status::OK();
    });
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

void RedisBackend::Execute(std::span<Operation> batch) {
  for (std::size_t start = 0; start < batch.size(); start += kMaxInFlight) {
    RunRound(batch.subspan(start, std::min(kMaxInFlight, batch.size() - start)));
  }
}

void RedisBackend::RunRound(std::span<Operation> ops) {
  std::vector<std::unique_ptr<RedisBatch>> batches(pool_.size());
  for (Operation& op : ops) {
    Result<std::size_t> server = pool_.Route(op.key);
    if (!server.ok()) {
      op.status = server.status();
      continue;
    }
    auto& batch = batches[*server];
    if (!batch) {
      batch = std::make_unique<RedisBatch>(pool_.address(*server).HostPort(),
                                           options_.session.limits, options_.counters);
    }
    batch->Add(op);
  }
  std::vector<net::ServerPool::Lease> leases;
  std::vector<net::Exchange> exchanges;
  std::vector<std::size_t> servers;
  leases.reserve(pool_.size());
  for (std::size_t server = 0; server < batches.size(); ++server) {
    if (!batches[server] || batches[server]->empty()) continue;
    leases.push_back(pool_.Acquire(server));
    net::Connection& connection = leases.back().connection();
    if (Status s = session_.Prepare(connection); !s.ok()) {
      batches[server]->Settle(s);
      if (!s.IsAuthFailed()) pool_.ReportFailure(server);
      continue;
    }
    const std::string& request = batches[server]->request();
    net::Exchange exchange;
    exchange.connection = &connection;
    exchange.request.push_back(iovec{const_cast<char*>(request.data()), request.size()});
    exchange.reader = batches[server].get();
    exchanges.push_back(std::move(exchange));
    servers.push_back(server);
  }
  if (!exchanges.empty()) {
    net::RunExchanges(exchanges, net::Clock::now() + options_.pool.connection.io_timeout);
  }
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    batches[servers[i]]->Settle(exchanges[i].status);
    if (exchanges[i].status.ok()) {
      pool_.ReportSuccess(servers[i]);
    } else {
      pool_.ReportFailure(servers[i]);
    }
  }
  // Scripts the server had not cached yet run again one by one, which loads them.
  for (auto& batch : batches) {
    if (!batch) continue;
    for (Operation* op : batch->needs_script()) ExecuteOne(*this, *op);
  }
}

}  // namespace cachet::redis
