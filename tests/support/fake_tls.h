// What the engine's TLS tests share: test certificates, the OpenSSL context of
// a fake TLS server held by the test, and a client connection to one. The fake
// servers themselves live with the tests that need their behaviour.
#pragma once

#include <openssl/ssl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cachet/net/connection.h"
#include "cachet/net/tls.h"
#include "launchers/tls_servers.h"

namespace cachet::net::fake_tls {

// Made once per test program (launchers/tls_servers.h), removed at its exit.
inline const test::TestCertificates& Certificates() {
  static std::unique_ptr<test::TestCertificates> made = [] {
    REQUIRE(test::HaveOpenSsl());
    auto certs = test::TestCertificates::Make();
    INFO(certs.status().ToString());
    REQUIRE(certs.ok());
    return std::move(certs).value();
  }();
  return *made;
}

// A TLS server context with the test server certificate. SIGPIPE is ignored:
// a fake server writing to a client that already closed gets an error, and
// the test does not end.
inline SSL_CTX* ServerContext() {
  ::signal(SIGPIPE, SIG_IGN);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  REQUIRE(ctx != nullptr);
  const test::CertificatePair pair = Certificates().server();
  REQUIRE(SSL_CTX_use_certificate_chain_file(ctx, pair.cert.c_str()) == 1);
  REQUIRE(SSL_CTX_use_PrivateKey_file(ctx, pair.key.c_str(), SSL_FILETYPE_PEM) == 1);
  return ctx;
}

// A TLS connection to 127.0.0.1:`port` trusting the test CA, not yet connected.
inline std::unique_ptr<Connection> TlsConnectionTo(std::uint16_t port,
                                                   std::chrono::milliseconds io_timeout) {
  TlsOptions tls;
  tls.enabled = true;
  tls.ca_file = Certificates().ca();
  ConnectionOptions options;
  options.io_timeout = io_timeout;
  std::string_view failed_option;
  Status made = TlsContext::Create(tls, &options.tls, &failed_option);
  INFO(made.ToString());
  REQUIRE(made.ok());
  return std::make_unique<Connection>(ServerAddress{"127.0.0.1", port, 1}, options);
}

}  // namespace cachet::net::fake_tls
