// InteropFixture: a memcached started for one test, and cachet Caches on it with a
// chosen flags profile, so a test can let another client write and cachet read, or
// the other way round.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "script_client.h"
#include "launchers/memcached_server.h"

namespace cachet::test {

// Values from this many bytes are compressed by cachet and by the Perl and Python
// clients (the scripts use the same threshold), so modest test values get compressed.
constexpr int kCompressThreshold = 100;

class InteropFixture {
 public:
  InteropFixture() {
    REQUIRE(HaveMemcached());  // .ci/setup installs it
    auto server = StartMemcached();
    REQUIRE(server.ok());
    server_ = std::move(server).value();
  }

  int port() const { return server_->port(); }

  // A Cache on the server with `profile` (perl | python) and `compressor`.
  std::unique_ptr<Cache> OpenCache(const std::string& profile, const std::string& compressor) {
    auto config = Config::Parse("[cache]\nbackend = memcached\nflags_profile = " + profile +
                                    "\ncompressor = " + compressor +
                                    "\ncompress_threshold = " + std::to_string(kCompressThreshold) +
                                    "\n[memcached]\nservers = " + server_->address() + "\n",
                                "interop test");
    REQUIRE(config.ok());
    auto cache = Cache::Open(std::move(config).value());
    INFO(cache.status().ToString());
    REQUIRE(cache.ok());
    return std::move(cache).value();
  }

 private:
  std::unique_ptr<ServerProcess> server_;
};

// True when `client` can run; otherwise warns, naming the missing package, so the
// caller returns and the test is visibly skipped rather than failed.
inline bool ClientAvailable(const ScriptClient& client, const std::string& package) {
  const Status probe = client.Probe();
  if (probe.IsUnsupported()) {
    WARN("skipped: " << client.client() << " is not installed (Debian package " << package
                     << "): " << probe.message());
    return false;
  }
  INFO(probe.ToString());
  REQUIRE(probe.ok());
  return true;
}

// The raw item a key holds, bypassing the codec: the flags the other client set.
inline Item RawItem(Cache& cache, const std::string& key) {
  Item item;
  const Status s = cache.GetItem(key, &item);
  INFO(key << ": " << s.ToString());
  REQUIRE(s.ok());
  return item;
}

}  // namespace cachet::test
