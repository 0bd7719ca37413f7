// The store commands of the CLI: one small function per command. Output
// conventions live in reply.cpp; argument checks in invocation.cpp.
#include "commands.h"

#include <chrono>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cachet/metrics_format.h"
#include "exit_codes.h"
#include "invocation.h"
#include "reply.h"
#include "shell_words.h"

namespace cachet::cli {
namespace {

// The value at args[index]; all of stdin when it is absent or "-".
Result<std::string> ValueArgument(CommandContext& ctx, const Invocation& inv, std::size_t index) {
  if (index < inv.args.size() && inv.args[index] != "-") return inv.args[index];
  if (ctx.in == nullptr) {
    return Status::InvalidArgument("a value from stdin is not possible here; give it inline");
  }
  std::string value(std::istreambuf_iterator<char>(*ctx.in), {});
  if (ctx.in->bad()) return Status::IoError("reading the value from stdin failed");
  return value;
}

// Reads the value at args[value_index], runs `store` on it and prints STORED or
// the outcome.
template <class StoreFn>
int StoreWithValue(CommandContext& ctx, const Invocation& inv, std::size_t value_index,
                   StoreFn store) {
  Result<std::string> value = ValueArgument(ctx, inv, value_index);
  if (!value.ok()) return ReportFailure(ctx, value.status());
  return ReportWrite(ctx, store(std::string_view(*value)), "STORED");
}

int RunCounter(CommandContext& ctx, const Invocation& inv, bool increment) {
  std::uint64_t delta = 1;
  if (inv.args.size() > 1) {
    std::optional<std::uint64_t> parsed = ParseUnsigned(inv.args[1]);
    if (!parsed) return ReportUsage(ctx, "DELTA must be an unsigned 64-bit number");
    delta = *parsed;
  }
  Result<std::uint64_t> value =
      increment ? ctx.cache->Incr(inv.args[0], delta) : ctx.cache->Decr(inv.args[0], delta);
  if (!value.ok()) return ReportFailure(ctx, value.status());
  PrintCounter(ctx, *value);
  return kExitSuccess;
}

// A miss prints "(nil)" in the shell and nothing in a one-shot command. A
// stored "(nil)" prints quoted (ShellValue), so the two never look alike.
int ReportMiss(CommandContext& ctx) {
  if (ctx.shell) ctx.out << kMissWord << '\n';
  return kExitNegative;
}

}  // namespace

int RunGet(CommandContext& ctx, const Invocation& inv) {
  Lookup<std::string> found = ctx.cache->Get<std::string>(inv.args[0]);
  if (found.miss()) return ReportMiss(ctx);
  if (found.error()) return ReportFailure(ctx, found.status());
  PrintValue(ctx, *found);
  return kExitSuccess;
}

int RunGets(CommandContext& ctx, const Invocation& inv) {
  Lookup<Versioned<std::string>> found = ctx.cache->Gets<std::string>(inv.args[0]);
  if (found.miss()) return ReportMiss(ctx);
  if (found.error()) return ReportFailure(ctx, found.status());
  ctx.out << found->cas << ' ';
  PrintValue(ctx, found->value);
  return kExitSuccess;
}

int RunSet(CommandContext& ctx, const Invocation& inv) {
  return StoreWithValue(
      ctx, inv, 1, [&](std::string_view v) { return ctx.cache->Set(inv.args[0], v, inv.ttl); });
}

int RunAdd(CommandContext& ctx, const Invocation& inv) {
  return StoreWithValue(
      ctx, inv, 1, [&](std::string_view v) { return ctx.cache->Add(inv.args[0], v, inv.ttl); });
}

int RunReplace(CommandContext& ctx, const Invocation& inv) {
  return StoreWithValue(
      ctx, inv, 1, [&](std::string_view v) { return ctx.cache->Replace(inv.args[0], v, inv.ttl); });
}

int RunAppend(CommandContext& ctx, const Invocation& inv) {
  return StoreWithValue(ctx, inv, 1,
                        [&](std::string_view v) { return ctx.cache->Append(inv.args[0], v); });
}

int RunPrepend(CommandContext& ctx, const Invocation& inv) {
  return StoreWithValue(ctx, inv, 1,
                        [&](std::string_view v) { return ctx.cache->Prepend(inv.args[0], v); });
}

int RunCas(CommandContext& ctx, const Invocation& inv) {
  std::optional<std::uint64_t> token = ParseUnsigned(inv.args[1]);
  if (!token) return ReportUsage(ctx, "CAS must be the unsigned number printed by gets");
  return StoreWithValue(ctx, inv, 2, [&](std::string_view v) {
    return ctx.cache->Cas(inv.args[0], v, *token, inv.ttl);
  });
}

int RunDel(CommandContext& ctx, const Invocation& inv) {
  return ReportWrite(ctx, ctx.cache->Remove(inv.args[0]), "DELETED");
}

int RunIncr(CommandContext& ctx, const Invocation& inv) { return RunCounter(ctx, inv, true); }

int RunDecr(CommandContext& ctx, const Invocation& inv) { return RunCounter(ctx, inv, false); }

int RunTouch(CommandContext& ctx, const Invocation& inv) {
  std::optional<std::uint64_t> seconds = ParseUnsigned(inv.args[1]);
  if (!seconds) {
    return ReportUsage(ctx, "SECONDS must be a whole number from 0 to 18446744073709551615");
  }
  return ReportWrite(ctx, ctx.cache->Touch(inv.args[0], TtlFromUnsignedSeconds(*seconds)),
                     "TOUCHED");
}

int RunMget(CommandContext& ctx, const Invocation& inv) {
  std::vector<Lookup<std::string>> found = ctx.cache->GetMulti<std::string>(inv.args);
  int exit_code = kExitSuccess;
  for (const Lookup<std::string>& one : found) {
    if (one.hit()) {
      ctx.out << ShellValue(*one) << '\n';
    } else if (one.miss()) {
      ctx.out << kMissWord << '\n';
      if (exit_code == kExitSuccess) exit_code = kExitNegative;
    } else {
      // In place, so line N still answers key N.
      ctx.out << "ERROR " << one.status().ToString() << '\n';
      exit_code = ExitCodeFor(one.status());
    }
  }
  return exit_code;
}

int RunStats(CommandContext& ctx, const Invocation&) {
  // What the servers that answered said, even when one did not.
  StatsMap stats;
  const Status s = ctx.cache->Stats(&stats);
  for (const auto& [name, value] : stats) ctx.out << name << ' ' << value << '\n';
  if (!s.ok()) return ReportFailure(ctx, s);
  return kExitSuccess;
}

int RunFlush(CommandContext& ctx, const Invocation&) {
  return ReportWrite(ctx, ctx.cache->Flush(), "OK");
}

// The metrics of this process's Cache: in the shell, of every command so far.
int RunMetrics(CommandContext& ctx, const Invocation& inv) {
  const std::string format = inv.args.empty() ? "prometheus" : inv.args[0];
  if (format == "prometheus") {
    WritePrometheus(*ctx.cache, ctx.out);
  } else if (format == "json") {
    WriteMetricsJson(*ctx.cache, ctx.out);
  } else {
    return ReportUsage(
        ctx, "metrics: unknown format " + QuoteShellWord(format) + " (prometheus or json)");
  }
  return kExitSuccess;
}

}  // namespace cachet::cli
