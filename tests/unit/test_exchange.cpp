// net::ExchangeState and its two drivers against a peer the test holds by hand
// (the far end of a Unix-domain socket): partial writes, replies split at every
// byte, bytes after the last reply, a stalled peer, a peer that hangs up in the
// middle of a reply. No server is needed.
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cachet/net/exchange.h"
#include "cachet/net/fan_out.h"

namespace cachet::net {
namespace {

using Catch::Contains;
using std::chrono::milliseconds;

// Replies are lines; the reader expects `expected` of them.
class LineReader final : public ReplyReader {
 public:
  explicit LineReader(std::size_t expected) : expected_(expected) {}
  Status Consume(ReadBuffer& buffer) override {
    while (lines.size() < expected_) {
      const std::size_t end = buffer.data().find('\n');
      if (end == std::string_view::npos) return Status::OK();
      if (buffer.data().substr(0, end) == "BAD") return Status::ProtocolError("a bad line");
      lines.emplace_back(buffer.data().substr(0, end));
      buffer.Consume(end + 1);
    }
    return Status::OK();
  }
  bool done() const noexcept override { return lines.size() == expected_; }
  std::vector<std::string> lines;

 private:
  std::size_t expected_;
};

// A connection and the peer's end of it, over a Unix-domain socket in /tmp.
class Pair {
 public:
  explicit Pair(milliseconds io_timeout = milliseconds(1000)) {
    path_ = "/tmp/cachet-exchange-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter_++) + ".sock";
    ::unlink(path_.c_str());
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    ConnectionOptions options;
    options.io_timeout = io_timeout;
    connection = std::make_unique<Connection>(ServerAddress{"unix:" + path_, 0, 1}, options);
    REQUIRE(connection->EnsureConnected().ok());
    peer = ::accept(listener_, nullptr, nullptr);
    REQUIRE(peer >= 0);
  }
  ~Pair() {
    if (peer >= 0) ::close(peer);
    ::close(listener_);
    ::unlink(path_.c_str());
  }

  // True when every byte went out. No Catch2 assertion inside: peer threads
  // call it too (their callers record the outcome and check it after join).
  [[nodiscard]] bool Send(std::string_view bytes) const {
    return ::send(peer, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads what the client sent so far, waiting up to `wait` for the first byte.
  std::string Receive(milliseconds wait = milliseconds(1000)) const {
    std::string got;
    pollfd p{peer, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) != 1) return got;
    char chunk[65536];
    // Bounded: stops as soon as nothing more is ready.
    for (;;) {
      const ssize_t n = ::recv(peer, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n <= 0) return got;
      got.append(chunk, static_cast<std::size_t>(n));
    }
  }
  void HangUp() {
    ::close(peer);
    peer = -1;
  }
  // True when the client closed its end: what it sent is drained until the
  // end of the stream (or 200 ms of quiet, which means it is still open).
  bool ClientClosed() const {
    char chunk[65536];
    const Clock::time_point end = Clock::now() + milliseconds(5000);
    while (Clock::now() < end) {
      pollfd p{peer, POLLIN, 0};
      if (::poll(&p, 1, 200) != 1) return false;
      const ssize_t n = ::recv(peer, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n == 0) return true;
      if (n < 0) return false;
    }
    return false;
  }

  std::unique_ptr<Connection> connection;
  int peer = -1;

 private:
  static inline int counter_ = 0;
  std::string path_;
  int listener_ = -1;
};

iovec Piece(const std::string& bytes) { return {const_cast<char*>(bytes.data()), bytes.size()}; }

// Runs `request` alone on `pair`'s connection, the call's deadline `budget` from now.
template <class Reader>
Status RunAlone(Pair& pair, const std::string& request, Reader& reader,
                milliseconds budget = milliseconds(3000)) {
  iovec piece = Piece(request);
  const Clock::time_point start = Clock::now();
  return RunLoneExchange(*pair.connection, &piece, 1, reader, start, start + budget);
}

// Runs `request` alone on `pair`'s connection, whose peer sent `reply` before it was asked.
template <class Reader>
Status RunAnsweredAlone(Pair& pair, std::string_view reply, const std::string& request,
                        Reader& reader) {
  REQUIRE(pair.Send(reply));
  return RunAlone(pair, request, reader);
}

// An exchange the test drives step by step through the state machine on
// `pair`'s connection: begun, and its request written (small, so whole); it
// then waits for `replies` lines. `pair` and `request` must outlive it.
struct SteppedExchange {
  SteppedExchange(Pair& pair, const std::string& request, std::size_t replies)
      : connection(*pair.connection), piece(Piece(request)), reader(replies) {
    state.Begin(&piece, 1);
    REQUIRE(state.Write(connection, reader) == Want::kRead);
  }
  SteppedExchange(const SteppedExchange&) = delete;  // `state` points at `piece`
  SteppedExchange& operator=(const SteppedExchange&) = delete;
  Want Read() { return state.Read(connection, reader); }

  Connection& connection;
  iovec piece;
  LineReader reader;
  ExchangeState state;
};

// A connection whose peer answered "value\n" before it was asked: beside one
// that fails in the poll loop, its own exchange ends well.
struct AnsweredPair {
  explicit AnsweredPair(milliseconds io_timeout = milliseconds(1000)) : pair(io_timeout) {
    REQUIRE(pair.Send("value\n"));
  }
  Pair pair;
  LineReader reader{1};
};

// One exchange of a poll-loop run: its connection (with the peer), request and reader.
struct Side {
  Pair& pair;
  const std::string& request;
  ReplyReader& reader;
};

// What each side's exchange ended with.
struct Outcomes {
  Status first;
  Status second;
};

// Runs both sides together through the poll loop, the call's deadline `budget` from now.
Outcomes RunSideBySide(Side first, Side second, milliseconds budget = milliseconds(3000)) {
  Exchange exchanges[2];
  exchanges[0] = {first.pair.connection.get(), {Piece(first.request)}, &first.reader, {}};
  exchanges[1] = {second.pair.connection.get(), {Piece(second.request)}, &second.reader, {}};
  RunExchanges(exchanges, Clock::now() + budget);
  return {exchanges[0].status, exchanges[1].status};
}

// Checks an exchange that failed: with `code`, a message that says `words`, and
// its connection closed, never to be reused.
void CheckFailedAndClosed(const Status& s, StatusCode code, const std::string& words,
                          const Pair& pair) {
  INFO(s.ToString());
  CHECK(s.code() == code);
  CHECK_THAT(std::string(s.message()), Contains(words));
  CHECK_FALSE(pair.connection->connected());
}

// Waits (at most 1 s) until the client's socket has bytes to read.
void AwaitBytes(const Connection& c) {
  pollfd p{c.fd(), POLLIN, 0};
  REQUIRE(::poll(&p, 1, 1000) == 1);
}

// Drains what the client sends until `total` bytes arrived or 5 s passed
// (bounded by the clock, not by a pass count); returns them.
std::string DrainFor(const Pair& pair, std::size_t total) {
  std::string got;
  const Clock::time_point end = Clock::now() + milliseconds(5000);
  while (got.size() < total && Clock::now() < end) got += pair.Receive(milliseconds(100));
  return got;
}

TEST_CASE("exchange: a reply split at any byte is read whole, step by step", "[exchange]") {
  const std::string reply = "first\nsecond\n";
  for (std::size_t cut = 1; cut < reply.size(); ++cut) {
    CAPTURE(cut);
    Pair pair;
    const std::string request = "get a b\n";
    SteppedExchange exchange(pair, request, 2);
    CHECK(pair.Receive() == request);
    REQUIRE(pair.Send(reply.substr(0, cut)));
    AwaitBytes(*pair.connection);
    // Half a reply: the machine still waits for bytes, the reader holds what is whole.
    CHECK(exchange.Read() == Want::kRead);
    CHECK(exchange.reader.lines.size() == (cut >= 6 ? 1u : 0u));
    REQUIRE(pair.Send(reply.substr(cut)));
    AwaitBytes(*pair.connection);
    REQUIRE(exchange.Read() == Want::kDone);
    CHECK(exchange.state.status().ok());
    CHECK(exchange.reader.lines == std::vector<std::string>{"first", "second"});
    CHECK(pair.connection->connected());  // kept for the next request
  }
}

TEST_CASE("exchange: the lone driver reads a reply split at any byte", "[exchange]") {
  const std::string reply = "first\nsecond\n";
  for (std::size_t cut = 1; cut < reply.size(); ++cut) {
    CAPTURE(cut);
    Pair pair;
    const std::string request = "get a b\n";
    bool sent = false;
    std::thread peer([&] {
      if (pair.Receive() != request) return;
      sent = pair.Send(reply.substr(0, cut));
      std::this_thread::sleep_for(milliseconds(5));
      sent = pair.Send(reply.substr(cut)) && sent;
    });
    LineReader reader(2);
    Status s = RunAlone(pair, request, reader);
    peer.join();
    CHECK(sent);
    CHECK(s.ok());
    CHECK(reader.lines == std::vector<std::string>{"first", "second"});
    CHECK(pair.connection->connected());
  }
}

TEST_CASE("exchange: a request the socket takes in parts goes out whole, in order", "[exchange]") {
  Pair pair;
  // Far more than a socket buffer holds: the first write is partial.
  const std::string big(8 << 20, 'x');
  const std::string tail = "end\n";
  iovec pieces[] = {Piece(big), Piece(tail)};
  LineReader reader(1);
  ExchangeState state;
  state.Begin(pieces, 2);
  REQUIRE(state.Write(*pair.connection, reader) == Want::kWrite);
  std::string received;
  // Bounded by the clock: each pass drains what was sent; the request is finite.
  const Clock::time_point end = Clock::now() + milliseconds(10000);
  while (state.want() == Want::kWrite && Clock::now() < end) {
    received += pair.Receive(milliseconds(50));
    state.Write(*pair.connection, reader);
  }
  REQUIRE(state.want() == Want::kRead);
  received += pair.Receive(milliseconds(50));
  CHECK(received.size() == big.size() + tail.size());
  CHECK(received == big + tail);
  REQUIRE(pair.Send("ok\n"));
  AwaitBytes(*pair.connection);
  CHECK(state.Read(*pair.connection, reader) == Want::kDone);
  CHECK(state.status().ok());
}

TEST_CASE("exchange: the lone driver waits for room, then reads the reply", "[exchange]") {
  Pair pair;
  const std::string big(8 << 20, 'y');
  std::size_t got = 0;
  bool sent = false;
  std::thread peer([&] {
    // Drains slowly at first, so the client must wait for room.
    std::this_thread::sleep_for(milliseconds(50));
    got = DrainFor(pair, big.size()).size();
    sent = pair.Send("stored\n");
  });
  LineReader reader(1);
  Status s = RunAlone(pair, big, reader, milliseconds(5000));
  peer.join();
  CHECK(sent);
  CHECK(s.ok());
  CHECK(got == big.size());
  CHECK(reader.lines == std::vector<std::string>{"stored"});
}

TEST_CASE("exchange: bytes after the last reply are an error and close the connection",
          "[exchange]") {
  SECTION("step by step") {
    Pair pair;
    const std::string request = "get a\n";
    SteppedExchange exchange(pair, request, 1);
    REQUIRE(pair.Send("value\nextra"));
    AwaitBytes(*pair.connection);
    CHECK(exchange.Read() == Want::kDone);
    CheckFailedAndClosed(exchange.state.status(), StatusCode::kProtocolError,
                         "bytes after the last reply", pair);
  }
  SECTION("lone driver") {
    Pair pair;
    const std::string request = "get a\n";
    LineReader reader(1);
    Status s = RunAnsweredAlone(pair, "value\nextra\n", request, reader);
    CheckFailedAndClosed(s, StatusCode::kProtocolError, "bytes after the last reply", pair);
  }
  SECTION("poll loop") {
    AnsweredPair good;
    Pair bad;
    const std::string request = "get a\n";
    LineReader reader(1);
    REQUIRE(bad.Send("value\nextra\n"));
    const Outcomes run = RunSideBySide({good.pair, request, good.reader}, {bad, request, reader});
    CHECK(run.first.ok());
    CHECK(good.pair.connection->connected());
    CHECK(run.second.IsProtocolError());
    CHECK_FALSE(bad.connection->connected());
  }
}

TEST_CASE("exchange: a stalled peer is a timeout within the I/O timeout, and is closed",
          "[exchange]") {
  const std::string request = "get a\n";
  SECTION("lone driver") {
    Pair pair(milliseconds(100));
    LineReader reader(1);
    const Clock::time_point start = Clock::now();
    Status s = RunAlone(pair, request, reader);
    const auto took = Clock::now() - start;
    CheckFailedAndClosed(s, StatusCode::kTimeout, "no reply within the I/O timeout", pair);
    CHECK(took < milliseconds(1000));
    CHECK(pair.ClientClosed());
  }
  SECTION("lone driver, the call's deadline first") {
    Pair pair(milliseconds(1000));
    LineReader reader(1);
    Status s = RunAlone(pair, request, reader, milliseconds(100));
    CheckFailedAndClosed(s, StatusCode::kTimeout, "no reply within the request timeout", pair);
  }
  SECTION("poll loop: the stalled one times out, the other answers") {
    Pair quiet(milliseconds(100));
    AnsweredPair live(milliseconds(100));
    LineReader reader(1);
    const Outcomes run = RunSideBySide({quiet, request, reader}, {live.pair, request, live.reader});
    CheckFailedAndClosed(run.first, StatusCode::kTimeout, "no reply within the I/O timeout", quiet);
    CHECK(run.second.ok());
  }
  SECTION("the machine's Expire step") {
    Pair pair;
    SteppedExchange exchange(pair, request, 1);
    const Clock::time_point now = Clock::now();
    CHECK(exchange.state.Expire(*pair.connection, now, now + milliseconds(500)) == Want::kDone);
    CHECK_THAT(std::string(exchange.state.status().message()),
               Contains("no reply within the I/O timeout"));
    CHECK_FALSE(pair.connection->connected());
  }
}

// A reader that takes every byte and never has its answer: the reply of a
// server that keeps sending and never finishes. With a `pause`, each Consume
// takes that long (a slow parser), so bytes are always waiting when it returns.
class EndlessReader final : public ReplyReader {
 public:
  explicit EndlessReader(milliseconds pause = milliseconds(0)) : pause_(pause) {}
  Status Consume(ReadBuffer& buffer) override {
    if (pause_.count() > 0) std::this_thread::sleep_for(pause_);
    taken += buffer.size();
    buffer.Consume(buffer.size());
    return Status::OK();
  }
  bool done() const noexcept override { return false; }
  std::size_t taken = 0;

 private:
  milliseconds pause_;
};

// The peer of `pair` sends `chunk` every `pause` (0: as fast as the socket
// takes it) from its own thread, so the client is never silent for long; it
// stops when the client closes, or after 5 s at most.
class Streamer {
 public:
  Streamer(const Pair& pair, std::size_t chunk, milliseconds pause)
      : thread_([&pair, chunk, pause] {
          // A send blocked by a client that stopped reading gives up after
          // 100 ms, so the 5 s bound holds whatever the client does.
          timeval wait{0, 100 * 1000};
          ::setsockopt(pair.peer, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
          const std::string bytes(chunk, 'x');
          const Clock::time_point end = Clock::now() + milliseconds(5000);
          while (Clock::now() < end) {
            const ssize_t n = ::send(pair.peer, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
            if (pause.count() > 0) std::this_thread::sleep_for(pause);
          }
        }) {}
  ~Streamer() { thread_.join(); }
  Streamer(const Streamer&) = delete;
  Streamer& operator=(const Streamer&) = delete;

 private:
  std::thread thread_;
};

// How a streaming peer sends, and how slowly the client's reader parses.
struct Pace {
  const char* name;
  std::size_t chunk;
  milliseconds pause;
  milliseconds parse;  // how long the reader takes over each read
};

// Runs `call` while `pair`'s peer streams at `pace`; returns how long the call
// took. The streamer stops once the call has closed the connection.
template <class Call>
Clock::duration TimeWhileStreaming(const Pair& pair, const Pace& pace, Call call) {
  Streamer streamer(pair, pace.chunk, pace.pause);
  const Clock::time_point start = Clock::now();
  call();
  return Clock::now() - start;
}

TEST_CASE("exchange: a reply that keeps arriving ends at the call's deadline, and is closed",
          "[exchange][deadline]") {
  // io_timeout (1 s) is never reached: the peer is never silent that long.
  // The call's deadline is 300 ms; each driver must end soon after it, well
  // before the 5 s the peer would go on sending.
  const milliseconds budget(300);
  const std::string request = "get big\n";
  // The last pace leaves bytes waiting whenever the driver looks (the reader
  // is slower than the peer), so only the clock can end the call.
  const Pace paces[] = {
      {"one byte every 50 ms", 1, milliseconds(50), milliseconds(0)},
      {"as fast as the socket takes it", 64 * 1024, milliseconds(0), milliseconds(0)},
      {"faster than the reader parses", 4096, milliseconds(0), milliseconds(20)}};
  for (const Pace& pace : paces) {
    CAPTURE(pace.name);
    SECTION(std::string("lone driver, ") + pace.name) {
      Pair pair(milliseconds(1000));
      EndlessReader reader(pace.parse);
      Status s;
      const Clock::duration took =
          TimeWhileStreaming(pair, pace, [&] { s = RunAlone(pair, request, reader, budget); });
      CheckFailedAndClosed(s, StatusCode::kTimeout, "no reply within the request timeout", pair);
      CHECK(reader.taken > 0);
      CHECK(took < 5 * budget);
    }
    SECTION(std::string("poll loop, ") + pace.name) {
      Pair streaming(milliseconds(1000));
      AnsweredPair answering(milliseconds(1000));
      EndlessReader endless(pace.parse);
      Outcomes run;
      const Clock::duration took = TimeWhileStreaming(streaming, pace, [&] {
        run = RunSideBySide({streaming, request, endless},
                            {answering.pair, request, answering.reader}, budget);
      });
      CheckFailedAndClosed(run.first, StatusCode::kTimeout, "no reply within the request timeout",
                           streaming);
      CHECK(endless.taken > 0);
      CHECK(run.second.ok());
      CHECK(took < 5 * budget);
    }
  }
}

TEST_CASE("exchange: the events it waits for follow its state, and Ready steps on them",
          "[exchange][events]") {
  Pair pair;
  const std::string request = "get a\n";
  iovec piece = Piece(request);
  LineReader reader(1);
  ExchangeState state;
  state.Begin(&piece, 1);
  // Request bytes remain: room to send, and replies meanwhile.
  CHECK(state.Events(*pair.connection, reader) == (POLLOUT | POLLIN));
  // A plain connection waits for the obvious events (TLS may say otherwise).
  CHECK(pair.connection->WriteEvents() == POLLOUT);
  CHECK(pair.connection->ReadEvents() == POLLIN);
  const Deadline deadline = Clock::now() + milliseconds(3000);
  REQUIRE(state.Ready(*pair.connection, reader, POLLOUT, Clock::now(), deadline) == Want::kRead);
  CHECK(state.Events(*pair.connection, reader) == POLLIN);
  CHECK(pair.Receive() == request);
  // Room to send changes nothing once the request is out.
  CHECK(state.Ready(*pair.connection, reader, POLLOUT, Clock::now(), deadline) == Want::kRead);
  REQUIRE(pair.Send("value\n"));
  AwaitBytes(*pair.connection);
  CHECK(state.Ready(*pair.connection, reader, POLLIN, Clock::now(), deadline) == Want::kDone);
  CHECK(state.status().ok());
  CHECK(state.Events(*pair.connection, reader) == 0);
  CHECK(pair.connection->connected());

  SECTION("a write-only request waits for room only") {
    LineReader none(0);
    ExchangeState writes;
    writes.Begin(&piece, 1);
    CHECK(writes.Events(*pair.connection, none) == POLLOUT);
  }
  SECTION("bytes that arrive past the call's deadline end it as a timeout") {
    SteppedExchange overdue(pair, request, 1);
    REQUIRE(pair.Send("half a li"));
    AwaitBytes(*pair.connection);
    const Clock::time_point now = Clock::now();
    CHECK(overdue.state.Ready(*pair.connection, overdue.reader, POLLIN, now,
                              now - milliseconds(1)) == Want::kDone);
    CheckFailedAndClosed(overdue.state.status(), StatusCode::kTimeout,
                         "no reply within the request timeout", pair);
  }
}

TEST_CASE("exchange: a peer that hangs up mid-reply fails the exchange and closes it",
          "[exchange]") {
  const std::string request = "get a b\n";
  SECTION("step by step") {
    Pair pair;
    SteppedExchange exchange(pair, request, 2);
    CHECK(pair.Receive() == request);  // read, so the hang-up is a clean close
    REQUIRE(pair.Send("first\nsec"));
    pair.HangUp();
    AwaitBytes(*pair.connection);
    Want want = exchange.Read();
    // The close may come with the bytes or on the next read.
    if (want == Want::kRead) want = exchange.Read();
    CHECK(want == Want::kDone);
    CheckFailedAndClosed(exchange.state.status(), StatusCode::kIoError, "closed by the server",
                         pair);
  }
  SECTION("lone driver") {
    Pair pair;
    bool sent = false;
    std::thread peer([&] {
      if (pair.Receive() != request) return;
      sent = pair.Send("first\nsec");
      pair.HangUp();
    });
    LineReader reader(2);
    Status s = RunAlone(pair, request, reader);
    peer.join();
    CHECK(sent);
    CheckFailedAndClosed(s, StatusCode::kIoError, "closed by the server", pair);
    CHECK(reader.lines == std::vector<std::string>{"first"});
  }
}

TEST_CASE("exchange: a reader's protocol error ends the exchange and closes it", "[exchange]") {
  Pair pair;
  const std::string request = "get a\n";
  LineReader reader(1);
  Status s = RunAnsweredAlone(pair, "BAD\n", request, reader);
  CHECK(s.IsProtocolError());
  // The reader's words, after the server's address the engine puts before them.
  CHECK(s.message() == pair.connection->address().HostPort() + ": a bad line");
  CHECK_FALSE(pair.connection->connected());
}

TEST_CASE("exchange: a request that expects no reply is done once sent", "[exchange]") {
  Pair pair;
  const std::string request = "set a 0 0 1 noreply\r\nx\r\n";
  LineReader reader(0);
  Status s = RunAlone(pair, request, reader);
  CHECK(s.ok());
  CHECK(pair.Receive() == request);
  CHECK(pair.connection->connected());
}

TEST_CASE("exchange: a reply before the request went out whole fails and closes", "[exchange]") {
  // Far more than a socket buffer holds: the first write is partial, and the
  // peer never reads it, but answers at once.
  const std::string big(8 << 20, 'z');
  SECTION("lone driver") {
    Pair pair;
    LineReader reader(1);
    Status s = RunAnsweredAlone(pair, "too large\n", big, reader);
    CheckFailedAndClosed(s, StatusCode::kProtocolError, "before the request was sent whole", pair);
  }
  SECTION("poll loop") {
    Pair pair;
    REQUIRE(pair.Send("too large\n"));
    AnsweredPair other;
    const std::string small = "get a\n";
    LineReader reader(1);
    const Outcomes run = RunSideBySide({pair, big, reader}, {other.pair, small, other.reader});
    CheckFailedAndClosed(run.first, StatusCode::kProtocolError, "before the request was sent whole",
                         pair);
    CHECK(run.second.ok());
  }
}

TEST_CASE("exchange: a peer that answered and hung up is quoted when the send fails",
          "[exchange]") {
  // A server refusing a request too large for it answers and closes before it
  // took the rest: the failed send says what the server had answered.
  const std::string big(8 << 20, 'z');
  Pair pair;
  REQUIRE(pair.Send("SERVER_ERROR object too large for cache\r\n"));
  pair.HangUp();
  LineReader reader(2);
  Status s = RunAlone(pair, big, reader);
  CheckFailedAndClosed(s, StatusCode::kIoError,
                       "the server's last reply: \"SERVER_ERROR object too large for cache\"",
                       pair);
}

TEST_CASE("exchange: a write-only request reads nothing while it is sent", "[exchange]") {
  // Bytes already waiting are not this request's: they stay on the socket, for
  // the pool's idle check, and the request goes out whole.
  const std::string big(8 << 20, 'w');
  SECTION("lone driver") {
    Pair pair;
    REQUIRE(pair.Send("stale\n"));
    std::string got;
    std::thread peer([&] { got = DrainFor(pair, big.size()); });
    LineReader reader(0);
    Status s = RunAlone(pair, big, reader, milliseconds(5000));
    peer.join();
    CHECK(s.ok());
    CHECK(got.size() == big.size());
    CHECK(pair.connection->connected());
    CHECK(pair.connection->buffer().empty());
  }
  SECTION("poll loop") {
    Pair pair;
    REQUIRE(pair.Send("stale\n"));
    AnsweredPair other;
    const std::string small = "get a\n";
    LineReader reader(0);
    std::string got;
    std::thread peer([&] { got = DrainFor(pair, big.size()); });
    const Outcomes run =
        RunSideBySide({pair, big, reader}, {other.pair, small, other.reader}, milliseconds(5000));
    peer.join();
    CHECK(run.first.ok());
    CHECK(got.size() == big.size());
    CHECK(pair.connection->connected());
    CHECK(pair.connection->buffer().empty());
    CHECK(run.second.ok());
  }
}

// A subscription's answer: the bytes after it are the link's messages.
class LinkOpener final {
 public:
  static constexpr bool kKeepsRest = true;
  Status Consume(ReadBuffer& buffer) {
    const std::size_t end = buffer.data().find('\n');
    if (end == std::string_view::npos) return Status::OK();
    buffer.Consume(end + 1);
    answered_ = true;
    return Status::OK();
  }
  bool done() const noexcept { return answered_; }

 private:
  bool answered_ = false;
};

TEST_CASE("exchange: a reader that opens a link keeps what follows its answer", "[exchange]") {
  Pair pair;
  const std::string request = "subscribe\n";
  LinkOpener reader;
  Status s = RunAnsweredAlone(pair, "subscribed\nmessage 1\n", request, reader);
  CHECK(s.ok());
  CHECK(pair.connection->connected());
  CHECK(pair.connection->buffer().data() == "message 1\n");
}

}  // namespace
}  // namespace cachet::net
