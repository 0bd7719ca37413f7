// RedisBackend: each operation is one command (redis_commands.h) and one reply
// mapping (redis_replies.h); the router (standalone or cluster) sends it.
#include "redis_backend.h"

#include <algorithm>
#include <memory>
#include <string>

#include "cas_token.h"
#include "cluster_router.h"
#include "cluster_slots.h"
#include "cluster_tracker.h"
#include "invalidation_tracker.h"
#include "redis_commands.h"
#include "redis_replies.h"
#include "resp_encoder.h"
#include "standalone_router.h"

namespace cachet::redis {

namespace {

// One request buffer per thread, reused by every call. A call made inside a
// push hook (refused before it sends) gets another: the outer call's request
// may still be going out from the first.
[[gnu::noinline]] std::string& HookRequestBuffer() {
  thread_local std::string in_hook;
  in_hook.clear();
  return in_hook;
}

std::string& RequestBuffer() {
  if (RedisSession::InPushHook()) [[unlikely]]
    return HookRequestBuffer();
  thread_local std::string buffer;
  buffer.clear();
  return buffer;
}

bool IsNoScript(const Status& s) {
  return s.IsInvalidArgument() && s.message().find("NOSCRIPT") != std::string_view::npos;
}

}  // namespace

std::string LeaseKeyOf(std::string_view key) {
  // A key with a hash tag keeps it: a suffix cannot change the first tag.
  if (HashTag(key).size() != key.size()) return std::string(key) + "#lease";
  // Else the whole key is hashed, and a tag of the whole key hashes the same,
  // unless the key has a '}' (the tag would end there): then a tag chosen to
  // land in the key's slot, followed by the key.
  if (key.find('}') == std::string_view::npos) return "{" + std::string(key) + "}#lease";
  return "{" + SlotTag(KeySlot(key)) + "}" + std::string(key) + "#lease";
}

RedisBackend::RedisBackend(RedisOptions options)
    : options_(std::move(options)), session_(options_.session) {
  if (options_.mode == RedisMode::kCluster) {
    ClusterSettings cluster = options_.cluster;
    cluster.seeds = options_.servers;
    router_ = std::make_unique<ClusterRouter>(std::move(cluster), options_.pool, session_,
                                              options_.counters);
  } else if (options_.mode == RedisMode::kSentinel) {
    SentinelSettings sentinel = options_.sentinel;
    sentinel.sentinels = options_.servers;
    router_ = std::make_unique<SentinelRouter>(std::move(sentinel), options_.pool, session_,
                                               options_.counters);
  } else {
    router_ = std::make_unique<StandaloneRouter>(options_.servers, options_.distribution,
                                                 options_.pool, session_, options_.counters);
  }
}

Status RedisBackend::SubscribeInvalidations(
    std::span<const std::string> prefixes, InvalidationListener* listener,
    std::unique_ptr<InvalidationSubscription>* subscription) {
  if (options_.mode == RedisMode::kSentinel) {
    return UnsupportedOperation("invalidations in sentinel mode");
  }
  TrackerSettings settings;
  settings.connection = options_.pool.connection;
  settings.session = options_.session;
  settings.prefixes.assign(prefixes.begin(), prefixes.end());
  if (options_.mode == RedisMode::kCluster) {
    auto& router = static_cast<ClusterRouter&>(*router_);
    *subscription = std::make_unique<ClusterTracker>(std::move(settings), &router.topology(),
                                                     listener);  // the links' part
    return Status::OK();
  }
  settings.servers = options_.servers;
  *subscription = std::make_unique<InvalidationTracker>(std::move(settings), listener);
  return Status::OK();
}

template <class Encode>
Status RedisBackend::RunScript(std::string_view key, const Encode& encode,
                               const ReplyFn& on_reply) {
  std::string& request = RequestBuffer();
  encode(&request, false);
  Status s = RunOnKey(key, request, on_reply);
  if (!IsNoScript(s)) return s;
  // The server does not know the script yet (first use, restart, SCRIPT FLUSH):
  // EVAL sends it in full and caches it for the next EVALSHA.
  std::string& retry = RequestBuffer();
  encode(&retry, true);
  return RunOnKey(key, retry, on_reply);
}

Status RedisBackend::Get(std::string_view key, Item* out) {
  std::string& request = RequestBuffer();
  AppendGet(&request, key);
  return router_->RunReadOnKey(key, request, [out](RespValue reply, std::string_view where) {
    return ReadValue(reply, where, out);
  });
}

// The token is computed here only, not in Get(): hashing every value read
// would cost plain reads a pass over their bytes. Read from the master, where
// the cas that follows compares: a lagging replica's bytes would fail it.
Status RedisBackend::Gets(std::string_view key, Item* out) {
  std::string& request = RequestBuffer();
  AppendGet(&request, key);
  Status s = RunOnKey(key, request, [out](RespValue reply, std::string_view where) {
    return ReadValue(reply, where, out);
  });
  if (s.ok()) out->cas = CasTokenOf(out->value);
  return s;
}

Status RedisBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                           const WriteOptions& options) {
  if (options.ttl.count() < 0) return NegativeTtlError("redis");
  if (mode == StoreMode::kAppend || mode == StoreMode::kPrepend) {
    return RunScript(
        key,
        [&](std::string* out, bool by_source) {
          AppendScript(out, mode, key, item.value, by_source);
        },
        [](RespValue reply, std::string_view where) {
          return ReadOneOrZero(reply, where, Status::NotStored());
        });
  }
  if (mode == StoreMode::kCas) {
    return RunScript(
        key,
        [&](std::string* out, bool by_source) {
          AppendCas(out, key, item.value, item.cas, options.ttl, by_source);
        },
        ReadCasOutcome);
  }
  std::string& request = RequestBuffer();
  AppendSet(&request, mode, key, item.value, options.ttl);
  return RunOnKey(key, request, ReadStored);
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
  return RunScript(
      key,
      [&](std::string* out, bool by_source) {
        AppendCounter(out, options_.counters, increment, key, delta, by_source);
      },
      [value](RespValue reply, std::string_view where) {
        return ReadCounter(reply, where, value);
      });
}

Status RedisBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter(true, key, delta, value);
}

Status RedisBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter(false, key, delta, value);
}

Status RedisBackend::Touch(std::string_view key, Ttl ttl) {
  if (ttl.count() < 0) return NegativeTtlError("redis");
  std::string& request = RequestBuffer();
  AppendTouch(&request, key, ttl);
  return RunOnKey(key, request, [ttl](RespValue reply, std::string_view where) {
    return ReadTouched(reply, where, SendsExpiry(ttl));
  });
}

Status RedisBackend::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  if (ttl.count() < 0) return NegativeTtlError("redis");
  std::string& request = RequestBuffer();
  AppendGetAndTouch(&request, key, ttl);
  return RunOnKey(key, request, [out](RespValue reply, std::string_view where) {
    return ReadValue(reply, where, out);
  });
}

Status RedisBackend::Flush() {
  std::string& request = RequestBuffer();
  RespCommand(&request, 1).Arg("FLUSHDB");
  return router_->RunOnEachServer(request,
                                  [](RespValue reply, std::string_view where, const std::string&) {
                                    return ReadNotError(reply, where);
                                  });
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
  std::string& request = RequestBuffer();
  RespCommand(&request, 1).Arg("INFO");
  return router_->RunOnEachServer(
      request, [out](RespValue reply, std::string_view where, const std::string& prefix) {
        if (!reply.IsString()) return ReadNotError(reply, where);
        AddInfoLines(reply.text(), prefix, out);
        return Status::OK();
      });
}

Status RedisBackend::Extension(std::string_view command, std::span<const std::string> args,
                               std::vector<std::string>* reply) {
  if (command != "counters")
    return UnsupportedOperation("extension '" + std::string(command) + "'");
  if (!args.empty()) return Status::InvalidArgument("redis: counters takes no arguments");
  reply->assign({options_.counters == CounterMode::kNative ? "redis" : "memcached"});
  return Status::OK();
}

void RedisBackend::Execute(std::span<Operation> batch) {
  // Inside a push hook this thread's batch runner may be mid-batch: nothing is sent.
  if (session_.InPushHook()) [[unlikely]] {
    for (Operation& op : batch) op.status = RedisSession::PushHookRefusal("batch");
    return;
  }
  for (std::size_t start = 0; start < batch.size(); start += kMaxInFlight) {
    router_->RunBatch(batch.subspan(start, std::min(kMaxInFlight, batch.size() - start)), *this);
  }
  // A batched gets: the token of the bytes this very read returned, as Gets()
  // computes it (reading again would see the batch's later writes).
  for (Operation& op : batch) {
    if (op.kind == OpKind::kGet && op.want_cas && op.status.ok()) {
      op.result.cas = CasTokenOf(op.result.value);
    }
  }
}

Status RedisBackend::LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                              LeaseGrant* grant, std::uint64_t* lease_cas) {
  *grant = LeaseGrant::kNone;
  *lease_cas = 0;  // the lock holds the owner's token instead
  if (request.lease.count() < 0 || request.recache_below.count() < 0) {
    return NegativeTtlError("redis");
  }
  if (request.owner.empty()) return Status::InvalidArgument("redis: a lease needs an owner token");
  const std::string lock = LeaseKeyOf(key);
  const std::int64_t lease_ms = std::max<std::int64_t>(request.lease.count(), 1);
  const std::int64_t below_ms =
      request.recache_below == Ttl::max() ? -1 : static_cast<std::int64_t>(request.recache_below.count());
  bool found = false;
  Status s = RunScript(
      key,
      [&](std::string* request_bytes, bool by_source) {
        AppendLeaseGet(request_bytes, key, lock, lease_ms, below_ms, request.owner, by_source);
      },
      [&](RespValue reply, std::string_view where) {
        if (reply.type() != RespType::kArray || reply.size() != 2 ||
            reply[1].type() != RespType::kInteger) {
          return ReadNotError(reply, where).ok()
                     ? Status::ProtocolError("redis: unexpected reply to the lease script")
                     : ReadNotError(reply, where);
        }
        const std::int64_t code = reply[1].integer();
        *grant = code == 1 ? LeaseGrant::kWon : code == 2 ? LeaseGrant::kHeld : LeaseGrant::kNone;
        if (reply[0].IsNull()) return Status::OK();
        found = true;
        return ReadValue(reply[0], where, out);
      });
  if (!s.ok()) {
    *grant = LeaseGrant::kNone;
    return s;
  }
  return found ? Status::OK() : Status::NotFound();
}

Status RedisBackend::EndLease(std::string_view key, const LeaseTicket& ticket,
                              LeaseEnd /*end*/) {
  // Whatever the end, the lock goes (a stored value, or none: the next caller
  // wins), if it is still ours: compare-and-delete in one script.
  const std::string lock = LeaseKeyOf(key);
  return RunScript(
      key,
      [&](std::string* request, bool by_source) {
        AppendLeaseEnd(request, lock, ticket.owner, by_source);
      },
      [](RespValue reply, std::string_view where) {
        return ReadOneOrZero(reply, where, Status::OK());
      });
}

}  // namespace cachet::redis
