// Encoding cachet operations as Redis commands.
#include "redis_commands.h"

#include <limits>

#include "cas_token.h"
#include "lua_scripts.h"
#include "resp_encoder.h"

namespace cachet::redis {

void AppendGet(std::string* out, std::string_view key) { RespCommand(out, 2).Arg("GET").Arg(key); }

void AppendSet(std::string* out, StoreMode mode, std::string_view key, std::string_view value,
               Ttl ttl) {
  bool has_ttl = ttl.count() > 0;
  bool conditional = mode != StoreMode::kSet;
  RespCommand command(out, 3 + (has_ttl ? 2 : 0) + (conditional ? 1 : 0));
  command.Arg("SET").Arg(key).Arg(value);
  if (has_ttl) command.Arg("PX").Arg(static_cast<std::int64_t>(ttl.count()));
  if (conditional) command.Arg(mode == StoreMode::kAdd ? "NX" : "XX");
}

void AppendScript(std::string* out, StoreMode mode, std::string_view key, std::string_view value,
                  bool by_source) {
  const LuaScript& script = mode == StoreMode::kAppend ? kAppendScript : kPrependScript;
  RespCommand command(out, 5);
  if (by_source) {
    command.Arg("EVAL").Arg(script.source);
  } else {
    command.Arg("EVALSHA").Arg(script.sha1);
  }
  command.Arg(std::int64_t{1}).Arg(key).Arg(value);
}

void AppendCas(std::string* out, std::string_view key, std::string_view value, std::uint64_t token,
               Ttl ttl, bool by_source) {
  RespCommand command(out, 7);
  if (by_source) {
    command.Arg("EVAL").Arg(kCasScript.source);
  } else {
    command.Arg("EVALSHA").Arg(kCasScript.sha1);
  }
  const std::int64_t ttl_ms = ttl.count() > 0 ? static_cast<std::int64_t>(ttl.count()) : 0;
  command.Arg(std::int64_t{1}).Arg(key).Arg(CasTokenText(token).view()).Arg(value).Arg(ttl_ms);
}

void AppendDel(std::string* out, std::string_view key) { RespCommand(out, 2).Arg("DEL").Arg(key); }

void AppendCounter(std::string* out, CounterMode mode, bool increment, std::string_view key,
                   std::uint64_t delta, bool by_source) {
  if (mode == CounterMode::kNative) {
    RespCommand(out, 3)
        .Arg(increment ? "INCRBY" : "DECRBY")
        .Arg(key)
        .Arg(static_cast<std::int64_t>(delta));
    return;
  }
  RespCommand command(out, 6);
  if (by_source) {
    command.Arg("EVAL").Arg(kCounterScript.source);
  } else {
    command.Arg("EVALSHA").Arg(kCounterScript.sha1);
  }
  command.Arg(std::int64_t{1}).Arg(key).Arg(delta).Arg(increment ? "+" : "-");
}

void AppendTouch(std::string* out, std::string_view key, Ttl ttl) {
  if (ttl.count() > 0) {
    RespCommand(out, 3).Arg("PEXPIRE").Arg(key).Arg(static_cast<std::int64_t>(ttl.count()));
  } else {
    RespCommand(out, 3).Arg("GETEX").Arg(key).Arg("PERSIST");
  }
}

void AppendGetAndTouch(std::string* out, std::string_view key, Ttl ttl) {
  if (ttl.count() > 0) {
    RespCommand(out, 4).Arg("GETEX").Arg(key).Arg("PX").Arg(static_cast<std::int64_t>(ttl.count()));
  } else {
    RespCommand(out, 3).Arg("GETEX").Arg(key).Arg("PERSIST");
  }
}

Status CheckCounterDelta(std::uint64_t delta) {
  if (delta <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return Status::OK();
  }
  return Status::InvalidArgument("redis counters are signed 64-bit: delta " +
                                 std::to_string(delta) + " is out of range");
}

}  // namespace cachet::redis
