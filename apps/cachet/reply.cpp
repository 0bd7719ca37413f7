// Printing of command results; see reply.h for the conventions.
#include "reply.h"

#include <ostream>
#include <string>
#include <vector>

#include "exit_codes.h"
#include "shell_words.h"

namespace cachet::cli {

std::string_view OutcomeWord(const Status& status) noexcept {
  if (status.IsNotFound()) return "NOT_FOUND";
  if (status.IsNotStored()) return "NOT_STORED";
  if (status.IsExists()) return "EXISTS";
  return "";
}

int ReportFailure(CommandContext& ctx, const Status& status) {
  if (!status.IsError()) {
    ctx.out << OutcomeWord(status) << '\n';
  } else if (ctx.shell) {
    ctx.out << "ERROR " << status.ToString() << '\n';
  } else {
    ctx.err << "cachet: " << status.ToString() << '\n';
  }
  return ExitCodeFor(status);
}

int ReportWrite(CommandContext& ctx, const Status& status, std::string_view ok_word) {
  if (!status.ok()) return ReportFailure(ctx, status);
  ctx.out << ok_word << '\n';
  return kExitSuccess;
}

int ReportUsage(CommandContext& ctx, std::string_view message) {
  if (ctx.shell) {
    ctx.out << "ERROR usage: " << message << '\n';
  } else {
    ctx.err << "cachet: " << message << "\n(see cachet --help)\n";
  }
  return kExitUsage;
}

void PrintValue(CommandContext& ctx, std::string_view bytes) {
  if (ctx.shell) {
    ctx.out << ShellValue(bytes) << '\n';
    return;
  }
  ctx.out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const bool ends_line = !bytes.empty() && bytes.back() == '\n';
  if (ctx.shell || (ctx.out_is_terminal && !ends_line)) ctx.out << '\n';
}

void PrintCounter(CommandContext& ctx, std::uint64_t value) {
  std::vector<std::string> counters;
  const bool is_signed = ctx.cache->backend().Extension("counters", {}, &counters).ok() &&
                         counters.size() == 1 && counters[0] == "redis";
  if (is_signed) {
    ctx.out << static_cast<std::int64_t>(value) << '\n';
  } else {
    ctx.out << value << '\n';
  }
}

}  // namespace cachet::cli
