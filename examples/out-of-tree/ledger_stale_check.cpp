// Run by ledger_server --stale-reply: the server answers the first get after
// two keys are stored with the other key's value first, as a reply left over
// from an earlier request would be. The ledger plugin pairs replies with
// requests by position, so it must refuse that exchange (an error, the
// connection dropped), never hand one key the other's value; the next read on
// a new connection gets the right value.
#include <cstdio>
#include <string>
#include <utility>

#include "cachet/cache.h"
#include "cachet/config.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CONFIG\n", argv[0]);
    return 2;
  }
  auto config = cachet::Config::LoadFile(argv[1]);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 2;
  }
  auto cache = cachet::Cache::Open(std::move(*config));
  if (!cache.ok()) {
    std::fprintf(stderr, "%s\n", cache.status().ToString().c_str());
    return 2;
  }
  if (!(*cache)->Set("a", std::string("A")).ok() || !(*cache)->Set("b", std::string("B")).ok()) {
    std::fprintf(stderr, "ledger: the sets failed\n");
    return 1;
  }
  const cachet::Lookup<std::string> first = (*cache)->Get("b");  // answered "A" first
  if (first.hit() && first.value() != "B") {
    std::fprintf(stderr, "ledger: b read as '%s': another key's value\n", first.value().c_str());
    return 1;
  }
  if (!first.error()) {
    std::fprintf(stderr, "ledger: a reply too many went unnoticed: %s\n",
                 first.status().ToString().c_str());
    return 1;
  }
  const cachet::Lookup<std::string> again = (*cache)->Get("b");
  if (!again.hit() || again.value() != "B") {
    std::fprintf(stderr, "ledger: b after the stale reply: %s\n", again.status().ToString().c_str());
    return 1;
  }
  std::printf("ledger: the stale reply was refused (%s), then b read right\n",
              first.status().ToString().c_str());
  return 0;
}
