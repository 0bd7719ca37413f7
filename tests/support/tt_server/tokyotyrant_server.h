// StartTokyoTyrant: a cachet-ttserver (the Tokyo Tyrant test server) started for a
// test on a free loopback port, and stopped by its PID (see server_process.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/server_process.h"

namespace cachet::test {

// The test server executable built beside the tests.
std::string TokyoTyrantServerPath();

// Starts one; `extra_args` are appended (for example {"--db", "+"}).
Result<std::unique_ptr<ServerProcess>> StartTokyoTyrant(std::vector<std::string> extra_args = {});

}  // namespace cachet::test
