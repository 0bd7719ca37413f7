// Starting the throwaway servers with the test suite's launchers.
#include "servers.h"

#include <unistd.h>

#include <filesystem>

#include "support/memcached_server.h"
#include "support/redis_server.h"

namespace cachet::bench {
namespace {

Result<std::unique_ptr<test::ServerProcess>> StartTokyoTyrant() {
  const std::string path = TokyoTyrantServerPath();
  if (access(path.c_str(), X_OK) != 0) {
    return Status::Unavailable(path + " not found (build the cachet_ttserver target)");
  }
  return test::ServerProcess::Start("cachet-ttserver", [path](int port) {
    return std::vector<std::string>{path, "--port", std::to_string(port)};
  });
}

void Keep(const std::string& backend, Result<std::unique_ptr<test::ServerProcess>> started,
          StartedServers* out) {
  if (!started.ok()) {
    out->notes.push_back(backend + ": " + started.status().ToString());
    return;
  }
  out->servers[backend] = (*started)->address();
  out->processes.push_back(std::move(started).value());
}

}  // namespace

std::string TokyoTyrantServerPath() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path(".") : self.parent_path()) / "cachet-ttserver";
}

StartedServers StartServers() {
  StartedServers out;
  Keep("memcached", test::StartMemcached(), &out);
  Keep("redis", test::StartRedis(), &out);
  Keep("tokyotyrant", StartTokyoTyrant(), &out);
  return out;
}

}  // namespace cachet::bench
