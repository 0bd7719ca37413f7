// Peer targets, for the libraries this build found.
#include "peers.h"

#ifdef CACHET_HAVE_LIBMEMCACHED
#include <libmemcached/memcached.h>

#include "peer_libmemcached.h"
#endif
#ifdef CACHET_HAVE_HIREDIS
#include <hiredis/hiredis.h>

#include "peer_hiredis.h"
#endif

namespace cachet::bench {

void AddPeerTargets(const std::map<std::string, std::string>& first_server,
                    std::vector<Target>* targets) {
#ifdef CACHET_HAVE_LIBMEMCACHED
  if (auto it = first_server.find("memcached"); it != first_server.end()) {
    targets->push_back({"libmemcached", it->second,
                        [server = it->second] { return ConnectLibmemcached(server); }});
  }
#endif
#ifdef CACHET_HAVE_HIREDIS
  if (auto it = first_server.find("redis"); it != first_server.end()) {
    targets->push_back(
        {"hiredis", it->second, [server = it->second] { return ConnectHiredis(server); }});
  }
#endif
  (void)first_server;
  (void)targets;
}

std::string PeersBuiltIn() {
  std::string peers;
#ifdef CACHET_HAVE_LIBMEMCACHED
  peers += "libmemcached";
#endif
#ifdef CACHET_HAVE_HIREDIS
  peers += peers.empty() ? "hiredis" : ", hiredis";
#endif
  return peers.empty() ? "none" : peers;
}

std::vector<std::pair<std::string, std::string>> PeerVersions() {
  std::vector<std::pair<std::string, std::string>> versions;
#ifdef CACHET_HAVE_LIBMEMCACHED
  versions.emplace_back("libmemcached", LIBMEMCACHED_VERSION_STRING);
#endif
#ifdef CACHET_HAVE_HIREDIS
  versions.emplace_back("hiredis", std::to_string(HIREDIS_MAJOR) + "." +
                                       std::to_string(HIREDIS_MINOR) + "." +
                                       std::to_string(HIREDIS_PATCH));
#endif
  return versions;
}

}  // namespace cachet::bench
