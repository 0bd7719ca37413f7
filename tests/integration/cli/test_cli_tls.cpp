// The cachet CLI over TLS, as the check: `cachet -o cache.backend=redis
// -o redis.servers=... -o redis.tls=true -o redis.tls_ca_file=ca.crt set k v`
// stores through TLS, and with another CA exits 3 naming the certificate
// problem; the same for memcached -Z.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_paths.h"
#include "run_command.h"
#include "launchers/tls_servers.h"

namespace cachet::test {
namespace {

CommandOutcome RunCli(const std::string& store, const std::string& address, const std::string& ca,
                      std::vector<std::string> command) {
  std::vector<std::string> argv = {kCachet,
                                   "-o",
                                   "cache.backend=" + store,
                                   "-o",
                                   store + ".servers=" + address,
                                   "-o",
                                   store + ".tls=true",
                                   "-o",
                                   store + ".tls_ca_file=" + ca};
  argv.insert(argv.end(), command.begin(), command.end());
  return RunCommand(argv);
}

}  // namespace

TEST_CASE("cachet set and get over TLS, another CA exits 3 naming the problem", "[cli][tls]") {
  REQUIRE(HaveOpenSsl());
  auto certs = TestCertificates::Make();
  REQUIRE(certs.ok());
  const TestCertificates& c = **certs;
  const std::string store = GENERATE(std::string("redis"), std::string("memcached"));
  INFO(store);
  auto server = store == "redis" ? StartRedisTls(c.server(), c.ca(), false)
                                 : StartMemcachedTls(c.server(), c.ca(), false);
  REQUIRE(server.ok());
  const std::string address = (*server)->address();

  CommandOutcome set = RunCli(store, address, c.ca(), {"set", "k", "v"});
  INFO(set.err);
  CHECK(set.exit_code == 0);
  CommandOutcome get = RunCli(store, address, c.ca(), {"get", "k"});
  CHECK(get.exit_code == 0);
  CHECK(get.out == "v");

  CommandOutcome refused = RunCli(store, address, c.other_ca(), {"set", "k", "v"});
  INFO(refused.err);
  CHECK(refused.exit_code == 3);
  CHECK(refused.err.find(address) != std::string::npos);
  CHECK(refused.err.find("certificate verify failed") != std::string::npos);
}

}  // namespace cachet::test
