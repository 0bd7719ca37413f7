// The engine over TLS when OpenSSL needs the other direction first: a read
// that must send (the client's own key update, asked for by the server, stuck
// in a full socket) and a write that must receive (the rest of a handshake
// message the server split across records). Fake TLS servers held by the test
// (loopback, OpenSSL on the server side too) make each situation happen on
// purpose; the connection's counters (Connection::tls_crossed_waits) show the
// engine went through it, and the request and reply must arrive byte for
// byte. Also: a TLS 1.2 server's request to renegotiate is refused.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cachet/net/exchange.h"
#include "cachet/net/fan_out.h"
#include "support/fake_tls.h"

namespace cachet::net {
namespace {

using fake_tls::OneLineReader;
using std::chrono::milliseconds;

// How long a fake server holds the client in the situation, from when the
// test is about to begin the exchange: time enough for the client's next step
// to meet it, even on a loaded machine.
constexpr milliseconds kHold(2000);

// How long the test, a fake server or the client waits for the other side
// before giving up: long, since it costs time only when something is wrong.
constexpr milliseconds kPatience(20000);

// A one-shot event between the test and a fake server's thread, with a value.
class Signal {
 public:
  void Raise(std::size_t value = 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    value_ = value;
    raised_ = true;
    changed_.notify_all();
  }
  // False if it was not raised within `limit`.
  bool Wait(milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, limit, [this] { return raised_; });
  }
  std::size_t value() {
    std::lock_guard<std::mutex> lock(mutex_);
    return value_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool raised_ = false;
  std::size_t value_ = 0;
};

// A TLS server for one connection, with a small receive buffer: it completes
// the handshake, runs its script, then waits for the client to close. Every
// wait of its own is bounded (kPatience).
class ScriptedTlsServer {
 public:
  using Script = std::function<void(ScriptedTlsServer&, SSL*, int)>;

  // Takes `ctx`.
  ScriptedTlsServer(SSL_CTX* ctx, Script script)
      : server_(
            ctx, kPatience,
            [this, script = std::move(script)](fake_tls::ServerSide& side) {
              if (SSL_accept(side.ssl()) != 1) return;
              script(*this, side.ssl(), side.fd());
              char byte;
              for (int reads = 0; reads < 100 && SSL_read(side.ssl(), &byte, 1) > 0; ++reads) {
              }
            },
            4096) {}

  std::uint16_t port() const { return server_.port(); }
  // Waits for the server to end (the client closed); request and refused are
  // then safe to read.
  void Finish() { server_.Join(); }

  Signal staged;      // the script set the situation up
  Signal idle_taken;  // the client took what came while it sat idle
  Signal nudged;      // the script sent what the stuck client will read
  Signal jammed;      // the test filled the client's socket, with how many raw bytes
  Signal go;          // the test is about to begin the exchange
  std::string request;   // the request as the script read it, every byte
  bool refused = false;  // the client refused to renegotiate

 private:
  fake_tls::OneConnectionServer server_;  // last: its thread uses the members above
};

// Reads until a '\n' arrived: every byte read, or "" on failure.
std::string ReadLine(SSL* ssl) {
  std::string line;
  char chunk[4096];
  for (int reads = 0; reads < 100 && line.find('\n') == std::string::npos; ++reads) {
    const int n = SSL_read(ssl, chunk, sizeof chunk);
    if (n <= 0) return "";
    line.append(chunk, static_cast<std::size_t>(n));
  }
  return line;
}

// Takes `count` raw bytes off the socket; false if they did not come.
bool Discard(int fd, std::size_t count) {
  char chunk[4096];
  while (count > 0) {
    const ssize_t n = ::recv(fd, chunk, std::min(count, sizeof chunk), 0);
    if (n <= 0) return false;
    count -= static_cast<std::size_t>(n);
  }
  return true;
}

// Sends `bytes` raw; false if the client is gone.
bool SendRaw(int fd, std::string_view bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

// Script: asks the client to update its keys, so that the client's next write
// must begin with a key update of its own. Once the client has taken that
// (its idle check), sends a key update (none asked back) that the client will
// read while its own is stuck in its full socket: the read must first send,
// and cannot. Once the test has filled the client's socket, waits kHold
// (sending nothing: no window update lets the client's bytes move), takes the
// test's raw bytes off the socket (the client's key update and request follow
// them), reads the request and answers "value\n".
void AnswerAfterJam(ScriptedTlsServer& server, SSL* ssl, int fd) {
  if (SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) != 1 || SSL_do_handshake(ssl) != 1) return;
  server.staged.Raise();
  if (!server.idle_taken.Wait(kPatience)) return;
  if (SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED) != 1 || SSL_do_handshake(ssl) != 1) {
    return;
  }
  server.nudged.Raise();
  if (!server.jammed.Wait(kPatience)) return;
  std::this_thread::sleep_for(kHold);
  if (!Discard(fd, server.jammed.value())) return;
  server.request = ReadLine(ssl);
  SSL_write(ssl, "value\n", 6);
}

// Session tickets carry this much of the server's own data, so one ticket
// needs several records of 512 bytes.
int PadTicket(SSL* ssl, void*) {
  static const std::string padding(4000, 'p');
  return SSL_SESSION_set1_ticket_appdata(SSL_get0_session(ssl), padding.data(), padding.size());
}

// A TLS 1.3 server context that sends no ticket in the handshake, and large ones.
SSL_CTX* LargeTicketContext() {
  SSL_CTX* ctx = fake_tls::ServerContext();
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_ticket_cb(ctx, &PadTicket, nullptr, nullptr);
  return ctx;
}

// Script: makes a session ticket in records of 512 bytes but sends only the
// first: the client has the start of a handshake message, and its next write
// must wait for the rest. Once the client took the first record (its idle
// check) and the test is about to begin the exchange (go), waits kHold, sends
// the rest, reads the request and answers "value\n".
void SplitTicket(ScriptedTlsServer& server, SSL* ssl, int fd) {
  SSL_set_max_send_fragment(ssl, 512);
  BIO* memory = BIO_new(BIO_s_mem());
  SSL_set0_wbio(ssl, memory);  // the SSL owns it
  if (SSL_new_session_ticket(ssl) != 1 || SSL_do_handshake(ssl) != 1) return;
  char* data = nullptr;
  const long size = BIO_get_mem_data(memory, &data);
  const std::string records(data, static_cast<std::size_t>(std::max(size, 0L)));
  SSL_set0_wbio(ssl, BIO_new_socket(fd, BIO_NOCLOSE));  // frees `memory`
  if (records.size() < 5) return;
  // A record: type, version (2 bytes), length (2 bytes), then its bytes.
  const std::size_t first =
      5 + (static_cast<unsigned char>(records[3]) << 8 | static_cast<unsigned char>(records[4]));
  if (first >= records.size()) return;  // the ticket fit one record: no situation
  if (!SendRaw(fd, std::string_view(records).substr(0, first))) return;
  server.staged.Raise();
  if (!server.idle_taken.Wait(kPatience) || !server.go.Wait(kPatience)) return;
  std::this_thread::sleep_for(kHold);
  if (!SendRaw(fd, std::string_view(records).substr(first))) return;
  server.request = ReadLine(ssl);
  SSL_write(ssl, "value\n", 6);
}

// Script (TLS 1.2): reads the request, asks the client to renegotiate and
// answers "value\n" right behind the request. The client refuses with an
// alert, which OpenSSL on this side takes as the end of the connection.
void RenegotiateThenAnswer(ScriptedTlsServer& server, SSL* ssl, int) {
  server.request = ReadLine(ssl);
  if (SSL_renegotiate(ssl) != 1 || SSL_do_handshake(ssl) != 1) return;
  SSL_write(ssl, "value\n", 6);
  ERR_clear_error();
  char byte;
  if (SSL_read(ssl, &byte, 1) <= 0) {
    server.refused = ERR_GET_REASON(ERR_peek_error()) == SSL_R_NO_RENEGOTIATION;
  }
  ERR_clear_error();
}

SSL_CTX* Tls12Context() {
  SSL_CTX* ctx = fake_tls::ServerContext();
  SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
  return ctx;
}

// True once `fd` has bytes to read, within `limit`.
bool Readable(int fd, milliseconds limit) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(limit.count())) == 1 && (p.revents & POLLIN) != 0;
}

// Fills `fd`'s socket with raw bytes until the kernel takes no more (the
// server reads none meanwhile): how many it took; 0 if it never filled.
std::size_t FillSocket(int fd) {
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  const std::string chunk(1024, '#');
  std::size_t taken = 0;
  // The kernel makes room again as the server's side acknowledges, which it
  // may delay (up to 200 ms): full means a pass after a longer pause took nothing.
  for (int pass = 0; pass < 20; ++pass) {
    bool took = false;
    for (int sends = 0; sends < 10000; ++sends) {
      const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n <= 0) break;
      taken += static_cast<std::size_t>(n);
      took = true;
    }
    if (!took && pass > 0) return taken;
    std::this_thread::sleep_for(milliseconds(250));
  }
  return 0;
}

// A connected client of `server`, once the server has staged its situation.
// Up to where its exchange begins, the client does what the pool does before
// each use, QuietSinceLastUse(), which takes what came while it sat idle: here
// until the server has been silent for 100 ms (bytes sent together may still
// arrive apart).
std::unique_ptr<Connection> ClientOf(ScriptedTlsServer& server) {
  // Its io_timeout outlasts kHold: the held exchange is silent that long.
  auto connection = fake_tls::ConnectedTlsConnectionTo(server.port(), kPatience);
  REQUIRE(server.staged.Wait(kPatience));
  REQUIRE(Readable(connection->fd(), kPatience));
  for (int checks = 0; checks < 20 && Readable(connection->fd(), milliseconds(100)); ++checks) {
    REQUIRE(connection->QuietSinceLastUse());
  }
  server.idle_taken.Raise();
  return connection;
}

// ClientOf(), then the server's nudge waiting unread.
std::unique_ptr<Connection> NudgedClientOf(ScriptedTlsServer& server) {
  auto connection = ClientOf(server);
  REQUIRE(server.nudged.Wait(kPatience));
  REQUIRE(Readable(connection->fd(), kPatience));
  return connection;
}

// Fills the client's socket: how many raw bytes the server has to take off.
// The server is told (jammed) right before the exchange begins, since it
// frees the socket kHold after that.
std::size_t Jam(Connection& connection) {
  const std::size_t filler = FillSocket(connection.fd());
  REQUIRE(filler > 0);
  return filler;
}

const std::string kRequest = "get k\n";

iovec RequestPiece() { return {const_cast<char*>(kRequest.data()), kRequest.size()}; }

// One exchange of kRequest on `connection`, by the lone driver: its status.
Status RunAlone(Connection& connection, OneLineReader& reader) {
  iovec piece = RequestPiece();
  const Clock::time_point start = Clock::now();
  return RunLoneExchange(connection, &piece, 1, reader, start, start + kPatience);
}

// `count` crossed waits of one kind: the situation came (at least one), and
// the engine waited for the event OpenSSL asked for. An engine that waited for
// the other event instead, ready all along, retries at once: tens of thousands
// of times over kHold.
void CheckWaitedForIt(std::uint32_t count) {
  CHECK(count >= 1);
  CHECK(count <= 3);
}

// The exchange ended well: the reply read whole, the request received whole,
// the connection fit for the pool.
void CheckAnswered(const Status& status, const OneLineReader& reader, Connection& connection,
                   ScriptedTlsServer& server) {
  INFO(status.ToString());
  CHECK(status.ok());
  CHECK(reader.line == "value");
  CHECK(connection.QuietSinceLastUse());
  connection.Close();
  server.Finish();
  CHECK(server.request == kRequest);
}

TEST_CASE("TLS: a read that must first send the client's key update waits for room",
          "[exchange][tls][key-update]") {
  SECTION("lone driver") {
    ScriptedTlsServer server(fake_tls::ServerContext(), &AnswerAfterJam);
    auto connection = NudgedClientOf(server);
    server.jammed.Raise(Jam(*connection));
    OneLineReader reader;
    const Status s = RunAlone(*connection, reader);
    CheckWaitedForIt(connection->tls_crossed_waits().read_wanted_write);
    CheckAnswered(s, reader, *connection, server);
  }
  SECTION("poll loop, two servers") {
    ScriptedTlsServer first(fake_tls::ServerContext(), &AnswerAfterJam);
    ScriptedTlsServer second(fake_tls::ServerContext(), &AnswerAfterJam);
    auto to_first = NudgedClientOf(first);
    auto to_second = NudgedClientOf(second);
    const std::size_t first_filler = Jam(*to_first);
    const std::size_t second_filler = Jam(*to_second);
    first.jammed.Raise(first_filler);
    second.jammed.Raise(second_filler);
    OneLineReader r1;
    OneLineReader r2;
    Exchange exchanges[2];
    exchanges[0] = {to_first.get(), {RequestPiece()}, &r1, {}};
    exchanges[1] = {to_second.get(), {RequestPiece()}, &r2, {}};
    RunExchanges(exchanges, Clock::now() + kPatience);
    CheckWaitedForIt(to_first->tls_crossed_waits().read_wanted_write);
    CheckWaitedForIt(to_second->tls_crossed_waits().read_wanted_write);
    CheckAnswered(exchanges[0].status, r1, *to_first, first);
    CheckAnswered(exchanges[1].status, r2, *to_second, second);
  }
}

TEST_CASE("TLS: a write that must first receive the rest of a handshake message waits for it",
          "[exchange][tls][ticket]") {
  SECTION("lone driver") {
    ScriptedTlsServer server(LargeTicketContext(), &SplitTicket);
    auto connection = ClientOf(server);
    OneLineReader reader;
    server.go.Raise();
    const Status s = RunAlone(*connection, reader);
    CheckWaitedForIt(connection->tls_crossed_waits().write_wanted_read);
    CheckAnswered(s, reader, *connection, server);
  }
  SECTION("poll loop, two servers") {
    ScriptedTlsServer first(LargeTicketContext(), &SplitTicket);
    ScriptedTlsServer second(LargeTicketContext(), &SplitTicket);
    auto to_first = ClientOf(first);
    auto to_second = ClientOf(second);
    OneLineReader r1;
    OneLineReader r2;
    Exchange exchanges[2];
    exchanges[0] = {to_first.get(), {RequestPiece()}, &r1, {}};
    exchanges[1] = {to_second.get(), {RequestPiece()}, &r2, {}};
    first.go.Raise();
    second.go.Raise();
    RunExchanges(exchanges, Clock::now() + kPatience);
    CheckWaitedForIt(to_first->tls_crossed_waits().write_wanted_read);
    CheckWaitedForIt(to_second->tls_crossed_waits().write_wanted_read);
    CheckAnswered(exchanges[0].status, r1, *to_first, first);
    CheckAnswered(exchanges[1].status, r2, *to_second, second);
  }
}

TEST_CASE("TLS 1.2: a server's request to renegotiate is refused, and its reply still reads whole",
          "[exchange][tls][renegotiation]") {
  ScriptedTlsServer server(Tls12Context(), &RenegotiateThenAnswer);
  auto connection = fake_tls::ConnectedTlsConnectionTo(server.port(), milliseconds(2000));
  OneLineReader reader;
  const Status s = RunAlone(*connection, reader);
  INFO(s.ToString());
  CHECK(s.ok());
  CHECK(reader.line == "value");
  server.Finish();  // it ends its side on the refusal
  CHECK(server.request == kRequest);
  CHECK(server.refused);
  // The server closed: the pool would not hand this connection out again.
  CHECK_FALSE(connection->QuietSinceLastUse());
}

}  // namespace
}  // namespace cachet::net
