// `cachet shell`: runs commands read from stdin, one per line, printing one
// result per line. This is how an in-process store (memory) is used from a
// terminal or a script: the store lives as long as the shell.
//
// Blank lines and lines starting with '#' are skipped; a trailing CR is dropped;
// "help" lists the commands; "quit" or "exit" ends the shell, as does the end of
// input. A bad line prints an "ERROR ..." line and the shell goes on. A line
// longer than the largest value ([cache] max_value_size) plus kLineMargin is
// refused as too_large without being held whole. "batch" ... "end" runs the
// commands between as one batch (shell_batch.h).
#include <unistd.h>

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "command_table.h"
#include "commands.h"
#include "exit_codes.h"
#include "invocation.h"
#include "line_reader.h"
#include "reply.h"
#include "shell_batch.h"
#include "shell_words.h"

namespace cachet::cli {
namespace {

// Room on a line for the command, the key, quotes and escapes beside the value.
constexpr std::size_t kLineMargin = 64 * 1024;

void RunWords(CommandContext& ctx, const std::vector<std::string>& words) {
  const CommandSpec* spec = FindCommand(words[0]);
  if (spec == nullptr) {
    const std::string suggestion = SuggestCommand(words[0]);
    ReportUsage(ctx, "unknown command " + QuoteShellWord(words[0]) +
                         (suggestion.empty() ? " (try: help)" : suggestion));
    return;
  }
  if (spec->kind == CommandKind::kShell) {
    ReportUsage(ctx, "already in the shell");
    return;
  }
  Result<Invocation> inv =
      ParseInvocation(*spec, std::vector<std::string>(words.begin() + 1, words.end()));
  if (!inv.ok()) {
    ReportUsage(ctx, inv.status().message());
  } else if (inv->help) {
    PrintCommandHelp(*spec, ctx.out);
  } else {
    spec->run(ctx, *inv);
  }
}

// Runs one line; false when the line asks to leave.
bool RunLine(CommandContext& ctx, ShellBatch& batch, std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  Result<std::vector<std::string>> words = SplitShellWords(line);
  if (!words.ok()) {
    // Inside a batch the error takes its line's place among the results.
    if (batch.open()) {
      batch.AddUsageError(std::string(words.status().message()));
    } else {
      ReportUsage(ctx, words.status().message());
    }
    return true;
  }
  if (words->empty() || (*words)[0].starts_with('#')) return true;
  const std::string& first = (*words)[0];
  if (first == "quit" || first == "exit") {
    batch.Abandon(ctx);
    return false;
  }
  if (first == "batch") {
    batch.Begin(ctx, *words);
  } else if (first == "end") {
    batch.End(ctx);
  } else if (batch.open()) {
    batch.Add(*words);
  } else if (first == "help") {
    PrintCommandList(ctx.out);
    ctx.out << "  batch [noreply]        run the commands up to \"end\" as one batch, one result"
               " line each\n";
  } else {
    RunWords(ctx, *words);
  }
  return true;
}

// Inside a batch the refusal takes the line's place among the batch's results.
void ReportLongLine(CommandContext& ctx, ShellBatch& batch, std::size_t length,
                    std::size_t max_line) {
  Status too_long = Status::TooLarge(
      "a line of " + std::to_string(length) + " bytes is over the shell's limit of " +
      std::to_string(max_line) + " (max_value_size + 64 KiB); it was skipped");
  if (batch.open()) {
    batch.AddFailure(std::move(too_long));
  } else {
    ReportFailure(ctx, too_long);
  }
}

}  // namespace

int RunShell(CommandContext& ctx, const Invocation&) {
  CommandContext line_ctx{ctx.config, ctx.cache, ctx.out, ctx.err};
  line_ctx.shell = true;  // and no stdin values: stdin holds the commands
  const bool interactive = ctx.out_is_terminal && isatty(STDIN_FILENO) == 1;
  const std::size_t max_line = ctx.cache->codec().options().max_value_size + kLineMargin;
  ShellBatch batch(*ctx.cache);
  std::string line;
  std::size_t length = 0;
  // Bounded by the input: one iteration per line read.
  while (true) {
    if (interactive) ctx.out << "cachet> " << std::flush;
    const LineOutcome read = ReadBoundedLine(*ctx.in, max_line, &line, &length);
    if (read == LineOutcome::kEnd) {
      batch.Abandon(line_ctx);
      break;
    }
    if (read == LineOutcome::kTooLong) {
      ReportLongLine(line_ctx, batch, length, max_line);
    } else if (!RunLine(line_ctx, batch, std::move(line))) {
      break;
    }
    ctx.out.flush();  // a script driving the shell through a pipe sees each answer at once
  }
  return kExitSuccess;
}

}  // namespace cachet::cli
