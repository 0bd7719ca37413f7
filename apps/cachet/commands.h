// The functions behind the CLI commands, one per command (see command_table.cpp).
// Each returns an exit code (exit_codes.h).
#pragma once

#include "command.h"

namespace cachet::cli {

// Store commands (commands.cpp): ctx.cache is open.
int RunGet(CommandContext& ctx, const Invocation& inv);
int RunGets(CommandContext& ctx, const Invocation& inv);
int RunSet(CommandContext& ctx, const Invocation& inv);
int RunAdd(CommandContext& ctx, const Invocation& inv);
int RunReplace(CommandContext& ctx, const Invocation& inv);
int RunAppend(CommandContext& ctx, const Invocation& inv);
int RunPrepend(CommandContext& ctx, const Invocation& inv);
int RunCas(CommandContext& ctx, const Invocation& inv);
int RunDel(CommandContext& ctx, const Invocation& inv);
int RunIncr(CommandContext& ctx, const Invocation& inv);
int RunDecr(CommandContext& ctx, const Invocation& inv);
int RunTouch(CommandContext& ctx, const Invocation& inv);
int RunMget(CommandContext& ctx, const Invocation& inv);
int RunStats(CommandContext& ctx, const Invocation& inv);
int RunFlush(CommandContext& ctx, const Invocation& inv);
int RunFetch(CommandContext& ctx, const Invocation& inv);  // fetch_command.cpp
int RunMetrics(CommandContext& ctx, const Invocation& inv);

// Config commands: ctx.cache is not used.
int RunPlugins(CommandContext& ctx, const Invocation& inv);  // plugins_command.cpp
int RunCheck(CommandContext& ctx, const Invocation& inv);    // check_command.cpp

// The shell (shell.cpp): ctx.cache is open, ctx.in holds the command lines.
int RunShell(CommandContext& ctx, const Invocation& inv);

}  // namespace cachet::cli
