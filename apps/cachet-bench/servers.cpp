// Starting the throwaway servers with the launchers the tests use (launchers/).
#include "servers.h"

#include "launchers/memcached_server.h"
#include "launchers/redis_server.h"
#include "launchers/tokyotyrant_server.h"

namespace cachet::bench {
namespace {

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

StartedServers StartServers() {
  StartedServers out;
  Keep("memcached", test::StartMemcached(), &out);
  Keep("redis", test::StartRedis(), &out);
  // cachet-ttserver, beside this executable.
  Keep("tokyotyrant", test::StartTokyoTyrant(), &out);
  return out;
}

}  // namespace cachet::bench
