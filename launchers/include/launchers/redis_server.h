// RedisServer: a standalone redis-server started for a test (see server_process.h).
//
// redis-server --port PORT --bind 127.0.0.1 --save "" --appendonly no, so nothing
// is written to disk, plus any extra arguments (for example {"--requirepass", "pw"}).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "launchers/server_process.h"

namespace cachet::test {

Result<std::unique_ptr<ServerProcess>> StartRedis(std::vector<std::string> extra_args = {});

// What `redis-cli -p PORT ARGS` prints for `server`, its trailing newline removed
// ("" if redis-cli could not be run). `args` is passed through the shell.
std::string RedisCli(const ServerProcess& server, const std::string& args);

}  // namespace cachet::test
