// StartTokyoTyrant (see tokyotyrant_server.h).
#include "launchers/tokyotyrant_server.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <utility>

namespace cachet::test {

std::string TokyoTyrantServerPath() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path(".") : self.parent_path()) / "cachet-ttserver";
}

Result<std::unique_ptr<ServerProcess>> StartTokyoTyrant(std::vector<std::string> extra_args) {
  std::string path = TokyoTyrantServerPath();
  if (access(path.c_str(), X_OK) != 0) {
    return Status::Unavailable(path + " not found (build the cachet_ttserver target)");
  }
  auto argv_for_port = [path = std::move(path), extra = std::move(extra_args)](int port) {
    std::vector<std::string> argv = {path, "--port", std::to_string(port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  return ServerProcess::Start("cachet-ttserver", std::move(argv_for_port));
}

}  // namespace cachet::test
