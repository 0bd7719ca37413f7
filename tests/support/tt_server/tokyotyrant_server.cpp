// StartTokyoTyrant (see tokyotyrant_server.h).
#include "support/tt_server/tokyotyrant_server.h"

#include <utility>

namespace cachet::test {

std::string TokyoTyrantServerPath() { return CACHET_TTSERVER_PATH; }

Result<std::unique_ptr<ServerProcess>> StartTokyoTyrant(std::vector<std::string> extra_args) {
  auto argv_for_port = [extra = std::move(extra_args)](int port) {
    std::vector<std::string> argv = {TokyoTyrantServerPath(), "--port", std::to_string(port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  return ServerProcess::Start("cachet-ttserver", std::move(argv_for_port));
}

}  // namespace cachet::test
