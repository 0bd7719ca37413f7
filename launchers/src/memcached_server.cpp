// MemcachedServer: the argv of a loopback-only memcached for tests.
#include "launchers/memcached_server.h"

#include <unistd.h>

#include <cstdlib>

namespace cachet::test {

Result<std::unique_ptr<ServerProcess>> StartMemcached(std::vector<std::string> extra_args) {
  auto argv_for_port = [extra = std::move(extra_args)](int port) {
    std::vector<std::string> argv = {"memcached", "-l", "127.0.0.1", "-p", std::to_string(port),
                                     "-U",        "0",  "-m",        "64", "-t",
                                     "2"};
    if (geteuid() == 0) {
      argv.push_back("-u");
      argv.push_back("root");
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  return ServerProcess::Start("memcached", std::move(argv_for_port));
}

bool HaveMemcached() { return std::system("command -v memcached >/dev/null 2>&1") == 0; }

}  // namespace cachet::test
