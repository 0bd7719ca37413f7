// StartTokyoTyrant: a cachet-ttserver (the Tokyo Tyrant test server) started on a
// free loopback port, and stopped by its PID (see server_process.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "launchers/server_process.h"

namespace cachet::test {

// cachet-ttserver beside the running executable: the build puts the tests,
// cachet-bench and the server in the same bin/ directory.
std::string TokyoTyrantServerPath();

// Starts one; `extra_args` are appended (for example {"--db", "+"}). kUnavailable,
// naming the path, when the server was not built.
Result<std::unique_ptr<ServerProcess>> StartTokyoTyrant(std::vector<std::string> extra_args = {});

}  // namespace cachet::test
