// TLS to real servers: redis-server --tls-port and memcached -Z, started here
// with certificates made here (launchers/tls_servers.h). Both stores, with and
// without client certificates; every handshake failure (unknown CA, wrong name,
// expired, a client certificate wanted, a plain server behind tls = true, a TLS
// server behind tls = false) an error naming the server and the reason, soon,
// and never a miss; bad certificate files a config error naming the option;
// large values and batches intact; a reconnect resuming the TLS session.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "cachet/net/connection.h"
#include "cachet/net/pool_config.h"
#include "cachet/net/tls.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_server.h"
#include "launchers/tls_servers.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

enum class Store { kRedis, kMemcached };

std::string NameOf(Store store) { return store == Store::kRedis ? "redis" : "memcached"; }

Store AnyStore() { return GENERATE(Store::kRedis, Store::kMemcached); }

const TestCertificates& Certificates() {
  static std::unique_ptr<TestCertificates> made = [] {
    REQUIRE(HaveOpenSsl());  // .ci/setup installs it
    auto certs = TestCertificates::Make();
    INFO(certs.status().ToString());
    REQUIRE(certs.ok());
    return std::move(certs).value();
  }();
  return *made;
}

std::unique_ptr<ServerProcess> StartTls(Store store, const CertificatePair& presented,
                                        bool require_client_cert = false) {
  const std::string ca = Certificates().ca();
  auto started = store == Store::kRedis ? StartRedisTls(presented, ca, require_client_cert)
                                        : StartMemcachedTls(presented, ca, require_client_cert);
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  return std::move(started).value();
}

std::unique_ptr<ServerProcess> StartPlain(Store store) {
  auto started = store == Store::kRedis ? StartRedis() : StartMemcached();
  REQUIRE(started.ok());
  return std::move(started).value();
}

// The config of `store` at `address`, with `tls` lines added to its section.
std::string ConfigText(Store store, const std::string& address, const std::string& tls) {
  return "[cache]\nbackend = " + NameOf(store) + "\nnamespace = t:\n[" + NameOf(store) +
         "]\nservers = " + address + "\nio_timeout_ms = 500\nretry_timeout_ms = 0\n" + tls;
}

Result<std::unique_ptr<Cache>> TryOpen(const std::string& text) {
  auto config = Config::Parse(text, "tls test");
  REQUIRE(config.ok());
  return Cache::Open(std::move(config).value());
}

std::unique_ptr<Cache> Open(Store store, const std::string& address, const std::string& tls) {
  auto cache = TryOpen(ConfigText(store, address, tls));
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

std::string TrustingCa() { return "tls = true\ntls_ca_file = " + Certificates().ca() + "\n"; }

// A set and a get that must fail: an error (never a miss) whose message names
// the server and contains `reason`, within a few I/O timeouts.
void CheckRefused(Cache& cache, const std::string& server, const std::string& reason) {
  const auto start = SteadyClock::now();
  const Status set = cache.Set<std::string>("k", "v");
  const auto found = cache.Get<std::string>("k");
  const auto took = SteadyClock::now() - start;
  INFO(set.ToString());
  INFO(found.status().ToString());
  CHECK(set.IsError());
  CHECK(found.status().IsError());
  CHECK_FALSE(found.miss());
  CHECK(std::string(set.message()).find(server) != std::string::npos);
  CHECK(std::string(set.message()).find(reason) != std::string::npos);
  CHECK(took < milliseconds(3000));
}

void CheckRoundTrip(Cache& cache) {
  REQUIRE(cache.Set<std::string>("k", "over tls").ok());
  auto found = cache.Get<std::string>("k");
  INFO(found.status().ToString());
  REQUIRE(found.hit());
  CHECK(found.value() == "over tls");
}

}  // namespace

TEST_CASE("a client certificate without its key names the option for the key", "[tls]") {
  const std::string text = "[store]\ntls = true\ntls_cert_file = " +
                           Certificates().client().cert + "\n";
  auto config = cachet::Config::Parse(text, "store.conf");
  REQUIRE(config.ok());
  REQUIRE(config->Validate("store", cachet::net::kServerPoolOptionSpecs).ok());
  cachet::net::ServerPoolOptions options;
  const cachet::Status s = cachet::net::ReadServerPoolOptions(*config->section("store"), &options);
  INFO(s.ToString());
  CHECK(s.IsConfigError());
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("no private key read") && Catch::Contains("tls_key_file"));
}

TEST_CASE("TLS without a client certificate: values, large values and batches", "[tls]") {
  const Store store = AnyStore();
  INFO(NameOf(store));
  auto server = StartTls(store, Certificates().server());
  auto cache = Open(store, server->address(), TrustingCa());
  CheckRoundTrip(*cache);

  // Larger than many TLS records, and than a direct read's threshold: received
  // straight into the caller's string, still byte for byte.
  std::string large(1000 * 1000, '\0');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 131 % 251);
  const Status stored = cache->Set<std::string>("large", large);
  INFO(stored.ToString());
  REQUIRE(stored.ok());
  std::string into;
  for (int round = 0; round < 3; ++round) {
    auto got = cache->Get<std::string>("large");
    REQUIRE(got.hit());
    CHECK(got.value() == large);
  }

  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) {
    keys.push_back("m" + std::to_string(i));
    REQUIRE(cache->Set<std::string>(keys.back(), "value " + std::to_string(i)).ok());
  }
  auto many = cache->GetMulti<std::string>(keys);
  REQUIRE(many.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO(keys[i]);
    REQUIRE(many[i].hit());
    CHECK(many[i].value() == "value " + std::to_string(i));
  }
}

TEST_CASE("TLS: a batch across two servers, values of many records each", "[tls][batch]") {
  // Both servers' exchanges run in one poll loop (RunExchanges): each value is
  // several TLS records, so records arrive in parts and every read and write
  // waits for the event its connection names.
  const Store store = AnyStore();
  INFO(NameOf(store));
  auto first = StartTls(store, Certificates().server());
  auto second = StartTls(store, Certificates().server());
  auto both = Open(store, first->address() + "," + second->address(), TrustingCa());
  std::vector<std::string> keys;
  std::vector<std::string> values;
  for (int i = 0; i < 60; ++i) {
    keys.push_back("batch" + std::to_string(i));
    values.emplace_back(40 * 1024 + i, static_cast<char>('a' + i % 26));
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::size_t i = 0; i < keys.size(); ++i) pairs.emplace_back(keys[i], values[i]);
  for (const Status& s : both->SetMulti<std::string>(pairs)) {
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  for (int round = 0; round < 3; ++round) {
    auto many = both->GetMulti<std::string>(keys);
    REQUIRE(many.size() == keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      INFO(keys[i] << " " << many[i].status().ToString());
      REQUIRE(many[i].hit());
      CHECK(many[i].value() == values[i]);
    }
  }
  // The keys really are spread over both servers.
  auto only_first = Open(store, first->address(), TrustingCa());
  auto only_second = Open(store, second->address(), TrustingCa());
  std::size_t on_first = 0;
  std::size_t on_second = 0;
  for (const std::string& key : keys) {
    on_first += only_first->Get<std::string>(key).hit() ? 1 : 0;
    on_second += only_second->Get<std::string>(key).hit() ? 1 : 0;
  }
  CHECK(on_first > 0);
  CHECK(on_second > 0);
  CHECK(on_first + on_second == keys.size());
}

TEST_CASE("TLS with a client certificate, and without one where it is required", "[tls]") {
  const Store store = AnyStore();
  INFO(NameOf(store));
  auto server = StartTls(store, Certificates().server(), /*require_client_cert=*/true);
  const CertificatePair client = Certificates().client();
  auto with_cert = Open(
      store, server->address(),
      TrustingCa() + "tls_cert_file = " + client.cert + "\ntls_key_file = " + client.key + "\n");
  CheckRoundTrip(*with_cert);

  // TLS 1.3 finishes the client's side of the handshake before the server
  // checks; its alert arrives with the first reply.
  auto without = Open(store, server->address(), TrustingCa());
  CheckRefused(*without, server->address(), "certificate required");
}

TEST_CASE("TLS handshake failures name the server and the reason", "[tls]") {
  const Store store = AnyStore();
  INFO(NameOf(store));
  const TestCertificates& certs = Certificates();

  SECTION("a CA that did not sign the server's certificate") {
    auto server = StartTls(store, certs.server());
    auto cache = Open(store, server->address(), "tls = true\ntls_ca_file = " + certs.other_ca());
    CheckRefused(*cache, server->address(), "certificate verify failed");
  }
  SECTION("a certificate for another name") {
    auto server = StartTls(store, certs.wrong_name());
    auto cache = Open(store, server->address(), TrustingCa());
    CheckRefused(*cache, server->address(), "IP address mismatch");
    // Named as its certificate names it, the same server is trusted.
    auto named =
        Open(store, server->address(), TrustingCa() + "tls_server_name = elsewhere.example");
    CheckRoundTrip(*named);
    auto misnamed =
        Open(store, server->address(), TrustingCa() + "tls_server_name = other.example");
    CheckRefused(*misnamed, server->address(), "hostname mismatch");
  }
  SECTION("an expired certificate") {
    auto server = StartTls(store, certs.expired());
    auto cache = Open(store, server->address(), TrustingCa());
    CheckRefused(*cache, server->address(), "certificate has expired");
  }
  SECTION("tls_verify = false accepts what it cannot check") {
    auto server = StartTls(store, certs.expired());
    auto cache = Open(store, server->address(),
                      "tls = true\ntls_verify = false\ntls_ca_file = " + certs.other_ca());
    CheckRoundTrip(*cache);
  }
  SECTION("a plain-text server behind tls = true") {
    auto server = StartPlain(store);
    auto cache = Open(store, server->address(), TrustingCa());
    CheckRefused(*cache, server->address(), "TLS");
  }
  SECTION("a TLS server behind tls = false") {
    auto server = StartTls(store, certs.server());
    auto cache = Open(store, server->address(), "");
    CheckRefused(*cache, server->address(), "");
  }
}

TEST_CASE("TLS 1.3 as the minimum version", "[tls]") {
  const Store store = AnyStore();
  auto server = StartTls(store, Certificates().server());
  auto cache = Open(store, server->address(), TrustingCa() + "tls_min_version = 1.3\n");
  CheckRoundTrip(*cache);
}

TEST_CASE("bad TLS files are config errors naming the option and the file", "[tls]") {
  const TestCertificates& certs = Certificates();
  const std::string base = ConfigText(Store::kRedis, "127.0.0.1:1", "tls = true\n");
  struct Case {
    std::string lines;
    std::string option;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"tls_ca_file = " + certs.dir() + "/absent.crt", "tls_ca_file", "No such file"},
      {"tls_ca_file = " + certs.server().key, "tls_ca_file", "no CA certificate read"},
      {"tls_ca_dir = " + certs.ca(), "tls_ca_dir", "not a directory"},
      {"tls_cert_file = " + certs.dir() + "/absent.crt", "tls_cert_file", "No such file"},
      {"tls_cert_file = " + certs.client().key + "\ntls_key_file = " + certs.client().key,
       "tls_cert_file", "no certificate read"},
      {"tls_cert_file = " + certs.client().cert + "\ntls_key_file = " + certs.server().key,
       "tls_key_file", "mismatch"},
      {"tls_key_file = " + certs.client().key, "tls_key_file", "without tls_cert_file"},
  };
  for (const Case& c : cases) {
    INFO(c.lines);
    auto cache = TryOpen(base + c.lines + "\n");
    REQUIRE_FALSE(cache.ok());
    const std::string message(cache.status().message());
    INFO(message);
    CHECK(cache.status().IsConfigError());
    CHECK(message.find("[redis] " + c.option + " = ") != std::string::npos);
    CHECK(message.find(c.reason) != std::string::npos);
  }
}

TEST_CASE("a reconnect resumes the server's TLS session", "[tls]") {
  const Store store = AnyStore();
  INFO(NameOf(store));
  auto server = StartTls(store, Certificates().server());
  net::TlsOptions options;
  options.enabled = true;
  options.ca_file = Certificates().ca();
  std::shared_ptr<const net::TlsContext> tls;
  std::string_view failed;
  REQUIRE(net::TlsContext::Create(options, &tls, &failed).ok());
  net::ConnectionOptions connection_options;
  connection_options.tls = tls;
  auto address = net::ParseServerAddress(server->address(), 0);
  REQUIRE(address.ok());
  net::Connection c(*address, connection_options);
  // One request and its reply each time: the session ticket comes with it.
  const std::string request = store == Store::kRedis ? "PING\r\n" : "version\r\n";
  const std::string reply_start = store == Store::kRedis ? "+PONG" : "VERSION ";
  for (int round = 0; round < 2; ++round) {
    REQUIRE(c.EnsureConnected(c.CallDeadline()).ok());
    CHECK(c.tls());
    CHECK(c.tls_resumed() == (round == 1));
    const std::string_view pieces[] = {request};
    REQUIRE(c.WriteAll(pieces, c.CallDeadline()).ok());
    const auto deadline = c.CallDeadline();
    // Bounded by the deadline: each pass reads something or fails.
    while (c.buffer().data().find("\r\n") == std::string_view::npos) {
      REQUIRE(c.ReadMore(deadline).ok());
    }
    CHECK(c.buffer().data().starts_with(reply_start));
    c.buffer().Consume(c.buffer().size());
    CHECK(c.QuietSinceLastUse());
    c.Close();
  }
}

}  // namespace cachet::test
