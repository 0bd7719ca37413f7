// RunCommand: runs a program as a user would from a shell, feeding it stdin and
// capturing stdout, stderr and the exit code, all bounded: output beyond a cap is
// dropped, and a program still running after a deadline is killed by its PID.
// The deadline is a safety net against a hung test, never something asserted.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace cachet::test {

struct CommandOutcome {
  int exit_code = -1;  // -1 when killed or not started
  std::string out;
  std::string err;
};

CommandOutcome RunCommand(const std::vector<std::string>& argv, const std::string& input = {},
                          std::chrono::seconds deadline = std::chrono::seconds(60));

}  // namespace cachet::test
