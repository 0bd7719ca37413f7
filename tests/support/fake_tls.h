// What the engine's TLS tests share: test certificates, the OpenSSL context of
// a fake TLS server held by the test, the server's side of one accepted
// connection, a server for one connection on its own thread, and the client's
// side: a connection to such a server and a reader of its one-line answer.
// What each fake server does with its connection lives with the test that
// needs that behaviour.
#pragma once

#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "cachet/net/connection.h"
#include "cachet/net/fan_out.h"
#include "cachet/net/tls.h"
#include "launchers/server_process.h"
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

// The server's side of one accepted connection: its socket, on which every
// blocking read or write gives up after `patience`, and an SSL on it whose
// handshake is not done yet. Owns both; `ctx` must outlive it.
class ServerSide {
 public:
  ServerSide(SSL_CTX* ctx, int fd, std::chrono::milliseconds patience)
      : fd_(fd), ssl_(SSL_new(ctx)) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(patience);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(patience - seconds);
    timeval wait{static_cast<time_t>(seconds.count()), static_cast<suseconds_t>(micros.count())};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
    SSL_set_fd(ssl_, fd_);
  }
  ~ServerSide() {
    SSL_free(ssl_);
    ::close(fd_);
  }
  ServerSide(const ServerSide&) = delete;
  ServerSide& operator=(const ServerSide&) = delete;

  int fd() const { return fd_; }
  SSL* ssl() const { return ssl_; }

 private:
  int fd_;
  SSL* ssl_;
};

// A fake TLS server on a free loopback port for one connection, on a thread of
// its own: it waits up to `patience` for the client, then hands `serve` the
// connection (see ServerSide), and closes it when `serve` returns. The thread
// is joined, and `ctx` (which it takes) freed, on destruction. A holder whose
// members `serve` uses declares this one after them, so they outlive the thread.
class OneConnectionServer {
 public:
  using Serve = std::function<void(ServerSide& side)>;

  // `receive_buffer`: the accepted socket's receive buffer in bytes; 0 keeps
  // the kernel's default.
  OneConnectionServer(SSL_CTX* ctx, std::chrono::milliseconds patience, Serve serve,
                      int receive_buffer = 0)
      : ctx_(ctx) {
    int port = 0;
    listener_ = test::ListenOnLoopback(1, &port);
    REQUIRE(listener_ >= 0);
    if (receive_buffer > 0) {
      // The accepted socket inherits it.
      ::setsockopt(listener_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    port_ = static_cast<std::uint16_t>(port);
    thread_ = std::thread([this, patience, serve = std::move(serve)] {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(patience.count())) != 1) return;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      ServerSide side(ctx_, fd, patience);
      serve(side);
    });
  }
  ~OneConnectionServer() {
    Join();
    ::close(listener_);
    SSL_CTX_free(ctx_);
  }
  OneConnectionServer(const OneConnectionServer&) = delete;
  OneConnectionServer& operator=(const OneConnectionServer&) = delete;

  std::uint16_t port() const { return port_; }
  // Waits until `serve` has returned (or no client came).
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  SSL_CTX* ctx_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

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

// TlsConnectionTo(), connected: the handshake done.
inline std::unique_ptr<Connection> ConnectedTlsConnectionTo(std::uint16_t port,
                                                            std::chrono::milliseconds io_timeout) {
  auto connection = TlsConnectionTo(port, io_timeout);
  Status connected = connection->EnsureConnected();
  INFO(connected.ToString());
  REQUIRE(connected.ok());
  REQUIRE(connection->tls());
  return connection;
}

// A reader of one "\n"-ended line, the answer of the fake servers.
class OneLineReader final : public ReplyReader {
 public:
  Status Consume(ReadBuffer& buffer) override {
    const std::size_t end = buffer.data().find('\n');
    if (end == std::string_view::npos) return Status::OK();
    line = std::string(buffer.data().substr(0, end));
    buffer.Consume(end + 1);
    return Status::OK();
  }
  bool done() const noexcept override { return !line.empty(); }
  std::string line;
};

}  // namespace cachet::net::fake_tls
