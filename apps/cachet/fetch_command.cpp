// `cachet fetch KEY -- COMMAND [ARGS...]`: GetOrCompute for shell scripts. The
// cached value, or COMMAND's stdout when it exits 0, stored for every process
// that shares the store; one run of COMMAND at a time across all of them.
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "child_process.h"
#include "commands.h"
#include "exit_codes.h"
#include "reply.h"

namespace cachet::cli {

namespace {

// The lease when neither --lease nor [cache] lease_ms names one: long enough for
// a slow command, short enough that a crashed one does not hold the key for long.
constexpr std::chrono::seconds kDefaultFetchLease{120};

ComputeOptions FetchOptions(const Cache& cache, const Invocation& inv) {
  ComputeOptions options = cache.options().compute;
  if (inv.ttl) options.ttl = inv.ttl;
  if (inv.stale) options.stale = *inv.stale;
  if (inv.lease) {
    options.lease = *inv.lease;
  } else if (options.lease.count() == 0) {
    options.lease = kDefaultFetchLease;
  }
  return options;
}

}  // namespace

int RunFetch(CommandContext& ctx, const Invocation& inv) {
  const std::string& key = inv.args[0];
  const std::vector<std::string> command(inv.args.begin() + 1, inv.args.end());
  ChildOutcome ran;
  std::string command_output;  // kept for a failed run, which is not cached
  // What the Cache would refuse to encode is not captured either.
  const std::size_t max_output = ctx.cache->codec().options().max_value_size;
  const Cache::ItemLoader run = [&](Item* item) -> Status {
    Status s = RunCapturingStdout(command, ctx.shell, max_output, &command_output, &ran);
    if (!s.ok()) return s;
    if (ran.exit_code != 0) {
      return Status::Unavailable("the command exited with status " + std::to_string(ran.exit_code));
    }
    item->value = std::move(command_output);
    item->flags = 0;  // raw bytes
    return Status::OK();
  };
  Item item;
  Status s = ctx.cache->GetOrComputeItem(key, run, FetchOptions(*ctx.cache, inv), &item);
  if (!ran.start_error.empty()) {
    ctx.err << "cachet fetch: " << ran.start_error << '\n';
    return ran.exit_code;
  }
  if (ran.exit_code != 0) {
    // Passed on as if the command had been run directly: its output, its status.
    ctx.out << command_output;
    // The shell's reader sees each command answer: a failed run says so.
    if (ctx.shell) {
      if (!command_output.empty() && command_output.back() != '\n') ctx.out << '\n';
      ctx.out << "ERROR the command exited with status " << ran.exit_code
              << ": nothing was cached\n";
    }
    ctx.out.flush();
    return ran.exit_code;
  }
  if (!s.ok()) return ReportFailure(ctx, s);
  std::string value;
  if (Status decoded = ctx.cache->codec().Decode(std::move(item), &value); !decoded.ok()) {
    return ReportFailure(ctx, decoded);
  }
  if (ctx.shell) {
    PrintValue(ctx, value);
  } else {
    ctx.out << value;  // the bytes exactly as the command wrote them
  }
  ctx.out.flush();
  return kExitSuccess;
}

}  // namespace cachet::cli
