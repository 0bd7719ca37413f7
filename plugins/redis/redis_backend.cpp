// RedisBackend: one command per operation, each reply mapped to a Status.
#include "redis_backend.h"

#include <charconv>
#include <limits>
#include <string>

#include "lua_scripts.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

constexpr int kAppend = 0;
constexpr int kPrepend = 1;
constexpr const LuaScript* kScripts[] = {&kAppendScript, &kPrependScript};

// One request buffer per thread, reused by every call.
std::string& RequestBuffer() {
  thread_local std::string buffer;
  buffer.clear();
  return buffer;
}

Status ErrorOr(RespValue reply, std::string_view where, Status otherwise) {
  if (reply.IsError()) return StatusFromError(reply.text(), where);
  return otherwise;
}

Status Unexpected(RespValue reply, std::string_view where) {
  return Status::ProtocolError("redis " + std::string(where) + ": unexpected " +
                               std::string(RespTypeName(reply.type())) + " reply");
}

Status ReadValue(RespValue reply, std::string_view where, Item* out) {
  if (reply.IsNull()) return Status::NotFound();
  if (!reply.IsString()) return ErrorOr(reply, where, Unexpected(reply, where));
  out->value.assign(reply.text());
  out->flags = 0;
  out->cas = 0;
  return Status::OK();
}

// 1 or 0 replies (DEL, PEXPIRE, the scripts): 0 is `on_zero`.
Status ReadOneOrZero(RespValue reply, std::string_view where, Status on_zero) {
  if (reply.type() != RespType::kInteger) return ErrorOr(reply, where, Unexpected(reply, where));
  return reply.integer() > 0 ? Status::OK() : on_zero;
}

void AppendTtl(RespCommand& command, Ttl ttl) {
  command.Arg("PX").Arg(static_cast<std::int64_t>(ttl.count()));
}

}  // namespace

RedisBackend::RedisBackend(RedisOptions options)
    : options_(std::move(options)),
      session_(options_.session),
      pool_(options_.servers,
            net::Distribution::Create(options_.distribution, options_.servers),
            options_.pool) {}

Status RedisBackend::RunOnServer(std::size_t server, std::string_view request,
                                 const ReplyFn& on_reply) {
  net::ServerPool::Lease lease = pool_.Acquire(server);
  std::string where = pool_.address(server).HostPort();
  Status result;
  Status transport = session_.Exchange(lease.connection(), request, 1,
                                       [&](std::size_t, RespValue reply) {
                                         result = on_reply(reply, where);
                                       });
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
  RespCommand(&request, 2).Arg("GET").Arg(key);
  return RunOnKey(key, request,
                  [out](RespValue reply, std::string_view where) {
                    return ReadValue(reply, where, out);
                  });
}

Status RedisBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                           const WriteOptions& options) {
  if (mode == StoreMode::kAppend) return RunScript(kAppend, key, item.value);
  if (mode == StoreMode::kPrepend) return RunScript(kPrepend, key, item.value);
  if (mode == StoreMode::kCas) return UnsupportedOperation("cas");
  bool has_ttl = options.ttl.count() > 0;
  bool conditional = mode != StoreMode::kSet;
  std::string& request = RequestBuffer();
  RespCommand command(&request, 3 + (has_ttl ? 2 : 0) + (conditional ? 1 : 0));
  command.Arg("SET").Arg(key).Arg(item.value);
  if (has_ttl) AppendTtl(command, options.ttl);
  if (conditional) command.Arg(mode == StoreMode::kAdd ? "NX" : "XX");
  return RunOnKey(key, request, [](RespValue reply, std::string_view where) {
    // SET NX / XX answers nil when its condition fails.
    if (reply.IsNull()) return Status::NotStored();
    if (reply.type() == RespType::kSimpleString) return Status::OK();
    return ErrorOr(reply, where, Unexpected(reply, where));
  });
}

Status RedisBackend::RunScript(int script, std::string_view key, std::string_view argument) {
  const LuaScript& lua = *kScripts[script];
  auto on_reply = [](RespValue reply, std::string_view where) {
    return ReadOneOrZero(reply, where, Status::NotStored());
  };
  std::string& request = RequestBuffer();
  RespCommand(&request, 5).Arg("EVALSHA").Arg(lua.sha1).Arg(std::int64_t{1}).Arg(key).Arg(argument);
  Status s = RunOnKey(key, request, on_reply);
  if (!s.IsInvalidArgument() || s.message().find("NOSCRIPT") == std::string_view::npos) return s;
  // The server does not know the script yet (first use, restart, SCRIPT FLUSH):
  // EVAL sends it in full and caches it for the next EVALSHA.
  std::string& retry = RequestBuffer();
  RespCommand(&retry, 5).Arg("EVAL").Arg(lua.source).Arg(std::int64_t{1}).Arg(key).Arg(argument);
  return RunOnKey(key, retry, on_reply);
}

Status RedisBackend::Remove(std::string_view key) {
  std::string& request = RequestBuffer();
  RespCommand(&request, 2).Arg("DEL").Arg(key);
  return RunOnKey(key, request, [](RespValue reply, std::string_view where) {
    return ReadOneOrZero(reply, where, Status::NotFound());
  });
}

Status RedisBackend::Counter(std::string_view command, std::string_view key, std::uint64_t delta,
                             std::uint64_t* value) {
  if (delta > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return Status::InvalidArgument("redis counters are signed 64-bit: delta " +
                                   std::to_string(delta) + " is out of range");
  }
  std::string& request = RequestBuffer();
  RespCommand(&request, 3).Arg(command).Arg(key).Arg(static_cast<std::int64_t>(delta));
  return RunOnKey(key, request, [value](RespValue reply, std::string_view where) {
    if (reply.type() != RespType::kInteger) return ErrorOr(reply, where, Unexpected(reply, where));
    // A negative counter reads back as its two's complement, as documented.
    *value = static_cast<std::uint64_t>(reply.integer());
    return Status::OK();
  });
}

Status RedisBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter("INCRBY", key, delta, value);
}

Status RedisBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter("DECRBY", key, delta, value);
}

Status RedisBackend::Touch(std::string_view key, Ttl ttl) {
  std::string& request = RequestBuffer();
  if (ttl.count() > 0) {
    RespCommand(&request, 3).Arg("PEXPIRE").Arg(key).Arg(static_cast<std::int64_t>(ttl.count()));
  } else {
    // PERSIST answers 0 both for a missing key and for a key without a TTL;
    // GETEX PERSIST tells the two apart (nil only when the key is missing).
    RespCommand(&request, 3).Arg("GETEX").Arg(key).Arg("PERSIST");
    return RunOnKey(key, request, [](RespValue reply, std::string_view where) {
      if (reply.IsNull()) return Status::NotFound();
      return ErrorOr(reply, where, Status::OK());
    });
  }
  return RunOnKey(key, request, [](RespValue reply, std::string_view where) {
    return ReadOneOrZero(reply, where, Status::NotFound());
  });
}

Status RedisBackend::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  std::string& request = RequestBuffer();
  if (ttl.count() > 0) {
    RespCommand(&request, 4).Arg("GETEX").Arg(key).Arg("PX").Arg(
        static_cast<std::int64_t>(ttl.count()));
  } else {
    RespCommand(&request, 3).Arg("GETEX").Arg(key).Arg("PERSIST");
  }
  return RunOnKey(key, request, [out](RespValue reply, std::string_view where) {
    return ReadValue(reply, where, out);
  });
}

Status RedisBackend::Flush() {
  Status first;
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    std::string& request = RequestBuffer();
    RespCommand(&request, 1).Arg("FLUSHDB");
    Status s = RunOnServer(server, request, [](RespValue reply, std::string_view where) {
      return ErrorOr(reply, where, Status::OK());
    });
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Status RedisBackend::Stats(StatsMap* out) {
  out->clear();
  Status first;
  for (std::size_t server = 0; server < pool_.size(); ++server) {
    std::string prefix = pool_.size() > 1 ? pool_.address(server).HostPort() + " " : "";
    std::string& request = RequestBuffer();
    RespCommand(&request, 1).Arg("INFO");
    Status s = RunOnServer(server, request, [&](RespValue reply, std::string_view where) {
      if (!reply.IsString()) return ErrorOr(reply, where, Unexpected(reply, where));
      std::string_view text = reply.text();
      // "name:value" lines; section headers start with '#'.
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
      return Status::OK();
    });
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

}  // namespace cachet::redis
