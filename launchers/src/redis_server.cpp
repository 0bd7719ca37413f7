// RedisServer: the argv of a loopback-only, diskless redis-server for tests.
#include "launchers/redis_server.h"

namespace cachet::test {

Result<std::unique_ptr<ServerProcess>> StartRedis(std::vector<std::string> extra_args) {
  auto argv_for_port = [extra = std::move(extra_args)](int port) {
    std::vector<std::string> argv = {
        "redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1",
        "--save",       "",       "--appendonly",       "no"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  return ServerProcess::Start("redis-server", std::move(argv_for_port));
}

std::string RedisCli(const ServerProcess& server, const std::string& args) {
  std::string out =
      CommandOutput("redis-cli -p " + std::to_string(server.port()) + " " + args);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace cachet::test
