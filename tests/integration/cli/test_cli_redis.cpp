// The cachet CLI against a real redis-server started on a free loopback port:
// Redis's own counters are signed, and print as the numbers they are, in a
// one-shot command and in the shell (one call, and a batch).
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli_paths.h"
#include "launchers/redis_server.h"
#include "run_command.h"

namespace cachet::test {
namespace {

class CliOnRedis {
 public:
  CliOnRedis() {
    auto server = StartRedis();
    REQUIRE(server.ok());
    server_ = std::move(server).value();
    config_ = WriteScratchFile("redis.conf", "[cache]\nbackend = redis\n\n[redis]\nservers = " +
                                                 server_->address() + "\n");
  }

  CommandOutcome Run(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), {kCachet, "-c", config_});
    return RunCommand(args, input);
  }

 private:
  std::unique_ptr<ServerProcess> server_;
  std::string config_;
};

}  // namespace

TEST_CASE_METHOD(CliOnRedis, "redis counters print signed, below zero too") {
  REQUIRE(Run({"set", "n", "-5"}).exit_code == 0);
  CHECK(Run({"incr", "n"}).out == "-4\n");
  CHECK(Run({"decr", "n", "10"}).out == "-14\n");
  CommandOutcome shell = Run({"shell"}, "set q 0\ndecr q\nbatch\nincr q 3\ndecr q 5\nend\n");
  REQUIRE(shell.exit_code == 0);
  CHECK(shell.out.find("\n-1\n") != std::string::npos);
  CHECK(shell.out.find("\n2\n-3\n") != std::string::npos);
}

}  // namespace cachet::test
