// --start-servers: throwaway memcached, redis-server and Tokyo Tyrant test
// server processes on free loopback ports, for one run. They are stopped by PID
// when the StartedServers is destroyed (SIGTERM, a bounded wait, then SIGKILL),
// which main() reaches also after Ctrl-C.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cachet/result.h"
#include "launchers/server_process.h"

namespace cachet::bench {

struct StartedServers {
  std::vector<std::unique_ptr<test::ServerProcess>> processes;
  // Backend name -> "127.0.0.1:port", for the configs' servers and the peers.
  std::map<std::string, std::string> servers;
  std::vector<std::string> notes;  // servers that could not be started
};

// Starts what it can; a server that is missing or fails is a note, not an error,
// so the other stores still run.
StartedServers StartServers();

}  // namespace cachet::bench
