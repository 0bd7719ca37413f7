// net::ExchangeState's drivers over TLS against a fake TLS server held by the
// test (loopback TCP, OpenSSL on the server side too): a server that trickles
// its reply's TLS record a byte at a time must not hold a call past its
// deadline, whichever driver runs it. Certificates are made by the test
// (support/fake_tls.h); no memcached or Redis is needed.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/net/exchange.h"
#include "cachet/net/fan_out.h"
#include "cachet/net/tls.h"
#include "support/fake_tls.h"

namespace cachet::net {
namespace {

using fake_tls::ConnectedTlsConnectionTo;
using fake_tls::OneLineReader;
using fake_tls::ServerContext;
using fake_tls::TlsConnectionTo;
using std::chrono::milliseconds;

// How long a fake server waits for its client, or on any read or write, and
// how long it trickles at most.
constexpr milliseconds kServerPatience(5000);

// A reader that takes every byte and never has its answer.
class EndlessReader final : public ReplyReader {
 public:
  Status Consume(ReadBuffer& buffer) override {
    taken += buffer.size();
    buffer.Consume(buffer.size());
    return Status::OK();
  }
  bool done() const noexcept override { return false; }
  std::size_t taken = 0;
};

// A TLS server for one connection: it completes the handshake, reads one
// request line, then sends `reply` as TLS records whose bytes go out one every
// `pause`, so the client's socket is never silent for long but no record is
// whole for a long time. It stops when the client closes, or after 5 s at
// most; every wait of its own is bounded too (kServerPatience).
class TricklingTlsServer {
 public:
  TricklingTlsServer(std::string reply, milliseconds pause)
      : server_(ServerContext(), kServerPatience,
                [this, reply = std::move(reply), pause](fake_tls::ServerSide& side) {
                  if (SSL_accept(side.ssl()) == 1 && ReadLine(side.ssl())) {
                    Trickle(side, reply, pause);
                  }
                }) {}

  std::uint16_t port() const { return server_.port(); }
  // Bytes of the reply's records sent before the client closed (or 5 s passed).
  std::size_t trickled() const { return trickled_.load(); }

 private:
  // Reads until a '\n' arrived; false on failure (each read bounded).
  static bool ReadLine(SSL* ssl) {
    char chunk[4096];
    for (int reads = 0; reads < 100; ++reads) {
      const int n = SSL_read(ssl, chunk, sizeof chunk);
      if (n <= 0) return false;
      if (std::string_view(chunk, static_cast<std::size_t>(n)).find('\n') !=
          std::string_view::npos) {
        return true;
      }
    }
    return false;
  }

  // Encrypts `reply` into memory, then sends those bytes one at a time.
  void Trickle(fake_tls::ServerSide& side, const std::string& reply, milliseconds pause) {
    BIO* memory = BIO_new(BIO_s_mem());
    SSL_set0_wbio(side.ssl(), memory);  // the SSL owns it from here
    if (SSL_write(side.ssl(), reply.data(), static_cast<int>(reply.size())) <= 0) return;
    char* bytes = nullptr;
    const long size = BIO_get_mem_data(memory, &bytes);
    const Clock::time_point end = Clock::now() + kServerPatience;
    for (long i = 0; i < size && Clock::now() < end; ++i) {
      if (::send(side.fd(), bytes + i, 1, MSG_NOSIGNAL) != 1) return;  // the client closed
      ++trickled_;
      std::this_thread::sleep_for(pause);
    }
  }

  std::atomic<std::size_t> trickled_{0};
  fake_tls::OneConnectionServer server_;  // last: its thread uses the members above
};

// One of several TLS servers, each for one connection, that answer a client's
// hello only once every one of them has received one: a client that
// handshakes with one server after another never gets an answer from the
// first (until `gate_wait` ran out), one that runs the handshakes together
// gets all. After the handshake each answers one request line with "value\n"
// and waits for the client to close. Every wait is bounded.
class GatedTlsServer {
 public:
  GatedTlsServer(std::atomic<int>* hellos, int servers, milliseconds gate_wait)
      : hellos_(hellos),
        servers_(servers),
        gate_wait_(gate_wait),
        server_(ServerContext(), kServerPatience,
                [this](fake_tls::ServerSide& side) { Serve(side); }) {}

  std::uint16_t port() const { return server_.port(); }

 private:
  void Serve(fake_tls::ServerSide& side) {
    // The hello has arrived when the socket has bytes.
    pollfd hello{side.fd(), POLLIN, 0};
    if (::poll(&hello, 1, 3000) == 1) ++*hellos_;
    const Clock::time_point end = Clock::now() + gate_wait_;
    while (hellos_->load() < servers_ && Clock::now() < end) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    char chunk[256];
    if (SSL_accept(side.ssl()) == 1 && SSL_read(side.ssl(), chunk, sizeof chunk) > 0 &&
        SSL_write(side.ssl(), "value\n", 6) == 6) {
      // Until the client closes: its close is not this test's business.
      while (SSL_read(side.ssl(), chunk, sizeof chunk) > 0) {
      }
    }
  }

  std::atomic<int>* hellos_;
  int servers_;
  milliseconds gate_wait_;
  fake_tls::OneConnectionServer server_;  // last: its thread uses the members above
};

iovec Piece(const std::string& bytes) { return {const_cast<char*>(bytes.data()), bytes.size()}; }

TEST_CASE("exchange over TLS: a reply trickled a byte at a time ends at the call's deadline",
          "[exchange][tls][deadline]") {
  // io_timeout 1 s is never reached (a byte every 50 ms, with room for a loaded
  // machine's stalls), so only the call's deadline (2.5 s) can end the call; the
  // reply's one record would take minutes to arrive whole. The server gives up after 5 s.
  const milliseconds io_timeout(1000);
  const milliseconds budget(2500);
  const std::string reply(4000, 'x');
  const std::string request = "get big\n";

  SECTION("lone driver") {
    TricklingTlsServer server(reply, milliseconds(50));
    auto connection = ConnectedTlsConnectionTo(server.port(), io_timeout);
    EndlessReader reader;
    iovec piece = Piece(request);
    const Clock::time_point start = Clock::now();
    Status s = RunLoneExchange(*connection, &piece, 1, reader, start, start + budget);
    const auto took = Clock::now() - start;
    INFO(s.ToString());
    CHECK(s.IsTimeout());
    CHECK(s.message().find("no reply within the request timeout") != std::string_view::npos);
    CHECK_FALSE(connection->connected());
    CHECK(took < budget + milliseconds(1500));  // the server hangs up only at 5 s
  }
  SECTION("poll loop, two servers") {
    TricklingTlsServer first(reply, milliseconds(50));
    TricklingTlsServer second(reply, milliseconds(50));
    auto to_first = ConnectedTlsConnectionTo(first.port(), io_timeout);
    auto to_second = ConnectedTlsConnectionTo(second.port(), io_timeout);
    EndlessReader r1;
    EndlessReader r2;
    Exchange exchanges[2];
    exchanges[0] = {to_first.get(), {Piece(request)}, &r1, {}};
    exchanges[1] = {to_second.get(), {Piece(request)}, &r2, {}};
    const Clock::time_point start = Clock::now();
    RunExchanges(exchanges, start + budget);
    const auto took = Clock::now() - start;
    for (Exchange& e : exchanges) {
      INFO(e.status.ToString());
      CHECK(e.status.IsTimeout());
      CHECK(e.status.message().find("no reply within the request timeout") !=
            std::string_view::npos);
      CHECK_FALSE(e.connection->connected());
    }
    CHECK(took < budget + milliseconds(1500));
  }
}

}  // namespace
}  // namespace cachet::net

namespace cachet::net {
namespace {

TEST_CASE("exchange over TLS: the poll loop runs every server's handshake at once",
          "[exchange][tls][connect]") {
  // Each server answers its hello only once all three have one (or after 3 s).
  // Handshakes one after another would wait on the first server longer than
  // its io_timeout (1 s) and fail it; together, every one succeeds.
  constexpr int kServers = 3;
  std::atomic<int> hellos{0};
  std::vector<std::unique_ptr<GatedTlsServer>> servers;
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < kServers; ++i) {
    servers.push_back(std::make_unique<GatedTlsServer>(&hellos, kServers, milliseconds(3000)));
    connections.push_back(TlsConnectionTo(servers.back()->port(), milliseconds(1000)));
  }
  const std::string request = "get a\n";
  OneLineReader readers[kServers];
  Exchange exchanges[kServers];
  for (int i = 0; i < kServers; ++i) {
    exchanges[i] = {connections[i].get(), {Piece(request)}, &readers[i], {}};
  }
  RunExchanges(exchanges, Clock::now() + milliseconds(3000));
  for (int i = 0; i < kServers; ++i) {
    INFO("server " << i << ": " << exchanges[i].status.ToString());
    CHECK(exchanges[i].status.ok());
    CHECK(readers[i].line == "value");
    CHECK(connections[i]->connected());
    CHECK(connections[i]->tls());
  }
  connections.clear();  // each server waits for its client's close
}

// A server that writes its reply and its close_notify in one send, then keeps
// the TCP connection open until the client closes (bounded by its patience).
class ClosingTlsServer {
 public:
  ClosingTlsServer()
      : server_(ServerContext(), kServerPatience, [](fake_tls::ServerSide& side) {
          char chunk[256];
          if (SSL_accept(side.ssl()) != 1 || SSL_read(side.ssl(), chunk, sizeof chunk) <= 0) {
            return;
          }
          BIO* memory = BIO_new(BIO_s_mem());
          SSL_set0_wbio(side.ssl(), memory);  // the SSL owns it from here
          if (SSL_write(side.ssl(), "value\n", 6) != 6) return;
          (void)SSL_shutdown(side.ssl());
          char* bytes = nullptr;
          const long size = BIO_get_mem_data(memory, &bytes);
          const auto length = static_cast<std::size_t>(size);
          if (::send(side.fd(), bytes, length, MSG_NOSIGNAL) != size) return;
          pollfd closed{side.fd(), POLLIN, 0};
          (void)::poll(&closed, 1, static_cast<int>(kServerPatience.count()));
        }) {}
  std::uint16_t port() const { return server_.port(); }

 private:
  fake_tls::OneConnectionServer server_;
};

TEST_CASE("a TLS connection whose server sent close_notify with its reply is not lent again",
          "[exchange][tls][pool]") {
  ClosingTlsServer server;
  auto connection = ConnectedTlsConnectionTo(server.port(), milliseconds(1000));
  const std::string request = "get a\n";
  OneLineReader reader;
  iovec piece = Piece(request);
  const Clock::time_point start = Clock::now();
  Status s = RunLoneExchange(*connection, &piece, 1, reader, start, start + milliseconds(2000));
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(reader.line == "value");
  // The session is over although the socket is silent: the pool's check says so.
  CHECK_FALSE(connection->QuietSinceLastUse());
  // A close, not a reply nobody asked for: no stream fault.
  CHECK_FALSE(connection->UnaskedBytesArrived());
  connection.reset();
}

// A server that answers, then sends a one-byte record nobody asked for while the
// client's connection is idle, then waits for the client's close.
TEST_CASE("a TLS connection that received a stray record while idle reports unasked bytes",
          "[exchange][tls][pool]") {
  fake_tls::OneConnectionServer server(ServerContext(), kServerPatience, [](auto& side) {
    char chunk[256];
    if (SSL_accept(side.ssl()) != 1 || SSL_read(side.ssl(), chunk, sizeof chunk) <= 0) return;
    if (SSL_write(side.ssl(), "value\n", 6) != 6) return;
    std::this_thread::sleep_for(milliseconds(50));  // the client is idle by then
    if (SSL_write(side.ssl(), "x", 1) != 1) return;
    pollfd closed{side.fd(), POLLIN, 0};
    (void)::poll(&closed, 1, static_cast<int>(kServerPatience.count()));
  });
  auto connection = ConnectedTlsConnectionTo(server.port(), milliseconds(1000));
  const std::string request = "get a\n";
  OneLineReader reader;
  iovec piece = Piece(request);
  const Clock::time_point start = Clock::now();
  REQUIRE(RunLoneExchange(*connection, &piece, 1, reader, start, start + milliseconds(2000)).ok());
  CHECK(reader.line == "value");
  pollfd stray{connection->fd(), POLLIN, 0};
  REQUIRE(::poll(&stray, 1, 2000) == 1);
  CHECK_FALSE(connection->QuietSinceLastUse());
  CHECK(connection->UnaskedBytesArrived());  // one byte, still OpenSSL's to read
  connection.reset();
}

}  // namespace
}  // namespace cachet::net
