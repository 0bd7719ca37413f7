// The peers: libmemcached and hiredis, built in when found at build time
// (CACHET_WITH_PEERS), pointed at the server of the first memcached and redis
// config so they run beside cachet against the same servers.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "target.h"

namespace cachet::bench {

// Appends a target per peer whose store has a server in `first_server`
// ("memcached" -> libmemcached, "redis" -> hiredis).
void AddPeerTargets(const std::map<std::string, std::string>& first_server,
                    std::vector<Target>* targets);

// The peers this build has, for --help ("libmemcached 1.1.4, hiredis 0.14.1").
std::string PeersBuiltIn();

// Each peer this build has, with the version of its headers: {"hiredis", "0.14.1"}.
std::vector<std::pair<std::string, std::string>> PeerVersions();

}  // namespace cachet::bench
