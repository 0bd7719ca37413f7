// Encoding cachet operations as Redis commands.
#include "redis_commands.h"

#include <array>
#include <charconv>
#include <limits>
#include <span>

#include "cas_token.h"
#include "lua_scripts.h"
#include "resp_encoder.h"

namespace cachet::redis {

namespace {

// Single-key commands (GET, SET of a small value, INCRBY) are assembled whole on the stack and
// appended at once; the bytes are those RespCommand writes.
constexpr std::size_t kStackCommand = 512;
// '$' or '*', 20 digits, CRLF after the length and after the bytes.
constexpr std::size_t kHeaderBound = 25;

// Appends the command made of `args` and returns true, or appends nothing and
// returns false when it would not fit the stack buffer.
bool AppendOnStack(std::string* out, std::span<const std::string_view> args) {
  std::size_t bound = kHeaderBound;
  for (std::string_view arg : args) bound += kHeaderBound + arg.size();
  if (bound > kStackCommand) return false;
  char buffer[kStackCommand];
  char* at = WriteArrayHeader(buffer, args.size());
  for (std::string_view arg : args) at = WriteBulkArg(at, arg);
  out->append(buffer, static_cast<std::size_t>(at - buffer));
  return true;
}

// The command made of `args`, on the stack when it fits.
void AppendArgs(std::string* out, std::span<const std::string_view> args) {
  if (AppendOnStack(out, args)) return;
  RespCommand command(out, args.size());
  for (std::string_view arg : args) command.Arg(arg);
}

// Decimal text of a number argument, kept in this object.
class NumberText {
 public:
  explicit NumberText(std::int64_t number)
      : size_(
            static_cast<std::size_t>(std::to_chars(digits_, digits_ + 20, number).ptr - digits_)) {}
  std::string_view view() const noexcept { return std::string_view(digits_, size_); }

 private:
  char digits_[20];
  std::size_t size_;
};

}  // namespace

void AppendGet(std::string* out, std::string_view key) {
  const std::string_view args[] = {"GET", key};
  AppendArgs(out, args);
}

void AppendSet(std::string* out, StoreMode mode, std::string_view key, std::string_view value,
               Ttl ttl) {
  const NumberText ttl_ms(static_cast<std::int64_t>(ttl.count()));
  std::array<std::string_view, 6> args{"SET", key, value};
  std::size_t count = 3;
  if (SendsExpiry(ttl)) {
    args[count++] = "PX";
    args[count++] = ttl_ms.view();
  }
  if (mode != StoreMode::kSet) args[count++] = mode == StoreMode::kAdd ? "NX" : "XX";
  AppendArgs(out, std::span<const std::string_view>(args.data(), count));
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
  const std::int64_t ttl_ms = SendsExpiry(ttl) ? static_cast<std::int64_t>(ttl.count()) : 0;
  command.Arg(std::int64_t{1}).Arg(key).Arg(CasTokenText(token).view()).Arg(value).Arg(ttl_ms);
}

void AppendLeaseGet(std::string* out, std::string_view key, std::string_view lock,
                    std::int64_t lease_ms, std::int64_t recache_below_ms, std::string_view owner,
                    bool by_source) {
  RespCommand command(out, 8);
  if (by_source) {
    command.Arg("EVAL").Arg(kLeaseGetScript.source);
  } else {
    command.Arg("EVALSHA").Arg(kLeaseGetScript.sha1);
  }
  command.Arg(std::int64_t{2}).Arg(key).Arg(lock).Arg(lease_ms).Arg(recache_below_ms).Arg(owner);
}

void AppendLeaseEnd(std::string* out, std::string_view lock, std::string_view owner,
                    bool by_source) {
  RespCommand command(out, 5);
  if (by_source) {
    command.Arg("EVAL").Arg(kLeaseEndScript.source);
  } else {
    command.Arg("EVALSHA").Arg(kLeaseEndScript.sha1);
  }
  command.Arg(std::int64_t{1}).Arg(lock).Arg(owner);
}

void AppendDel(std::string* out, std::string_view key) { RespCommand(out, 2).Arg("DEL").Arg(key); }

void AppendCounter(std::string* out, CounterMode mode, bool increment, std::string_view key,
                   std::uint64_t delta, bool by_source) {
  if (mode == CounterMode::kNative) {
    // A step of one is INCR / DECR: the same effect in a shorter command that
    // the server parses one argument less of (the usual counter, pipelined).
    if (delta == 1) {
      const std::string_view args[] = {increment ? "INCR" : "DECR", key};
      AppendArgs(out, args);
      return;
    }
    const NumberText by(static_cast<std::int64_t>(delta));
    const std::string_view args[] = {increment ? "INCRBY" : "DECRBY", key, by.view()};
    AppendArgs(out, args);
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
  if (SendsExpiry(ttl)) {
    RespCommand(out, 3).Arg("PEXPIRE").Arg(key).Arg(static_cast<std::int64_t>(ttl.count()));
  } else {
    RespCommand(out, 3).Arg("GETEX").Arg(key).Arg("PERSIST");
  }
}

void AppendGetAndTouch(std::string* out, std::string_view key, Ttl ttl) {
  if (SendsExpiry(ttl)) {
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
