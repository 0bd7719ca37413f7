// A benchmark target: one column of the tables. Either a config opened as a
// cachet Cache, or a peer library; both hand out Clients, one per thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cachet/result.h"
#include "client.h"

namespace cachet::bench {

struct Target {
  std::string label;   // the config file's stem ("redis"), or the peer's name
  std::string source;  // the config path, or the peer's server
  // A Client for one thread. Cache targets share one Cache between all their
  // Clients (as an application's threads would), or open one per Client
  // (`cache_per_thread`); peers open a connection each.
  std::function<Result<std::unique_ptr<Client>>()> connect;
};

struct OpenedTargets {
  std::vector<Target> targets;
  // The first server of the first config of each backend ("memcached" ->
  // "127.0.0.1:11211"), where the peers are pointed.
  std::map<std::string, std::string> first_server;
};

// Opens every config with `overrides` applied to each; `servers` replaces the
// servers of the configs whose backend it names ("redis" -> "127.0.0.1:4242").
// Labels are file stems; when two collide the backend name is added
// ("a:redis"), then a number ("a:redis#2"). Fails on the first config that does
// not open. With `cache_per_thread`, each Client opens its config again, for a
// Cache of its own.
Result<OpenedTargets> OpenTargets(const std::vector<std::string>& config_paths,
                                  const std::vector<std::string>& overrides,
                                  const std::map<std::string, std::string>& servers,
                                  bool cache_per_thread = false);

}  // namespace cachet::bench
