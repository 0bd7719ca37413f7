// The Tokyo Tyrant test server, checked against PROTOCOLS.md with hand-written
// bytes over a raw socket (not cachet's own encoder, so a shared mistake cannot
// hide).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "launchers/tokyotyrant_server.h"
#include "tt_bytes.h"

using cachet::test::Hex;

namespace {

// A blocking loopback client with a deadline on every read, so a server that
// says nothing fails the test instead of hanging it.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~RawClient() { close(fd_); }

  void Send(const std::string& bytes) {
    REQUIRE(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }

  // Exactly `n` bytes, or fewer if the server closes or the deadline passes.
  std::string Read(std::size_t n, int deadline_ms = 5000) {
    std::string out;
    while (out.size() < n) {
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, deadline_ms) <= 0) break;
      char buf[65536];
      const ssize_t got = recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
      if (got <= 0) break;
      out.append(buf, static_cast<std::size_t>(got));
    }
    return out;
  }

  // True when the server closed the connection (without sending anything more).
  bool ClosedWithoutReply() {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, 5000) <= 0) return false;
    char c;
    return recv(fd_, &c, 1, 0) == 0;
  }

  std::string Roundtrip(const std::string& request, std::size_t reply_size) {
    Send(request);
    return Read(reply_size);
  }

 private:
  int fd_ = -1;
};

std::string Put(std::string_view cmd, std::string_view key, std::string_view value) {
  std::string out = Hex(cmd);
  const std::uint32_t ksiz = htonl(static_cast<std::uint32_t>(key.size()));
  const std::uint32_t vsiz = htonl(static_cast<std::uint32_t>(value.size()));
  out.append(reinterpret_cast<const char*>(&ksiz), 4);
  out.append(reinterpret_cast<const char*>(&vsiz), 4);
  out += key;
  out += value;
  return out;
}

std::string KeyCommand(std::string_view cmd, std::string_view key) {
  std::string out = Hex(cmd);
  const std::uint32_t ksiz = htonl(static_cast<std::uint32_t>(key.size()));
  out.append(reinterpret_cast<const char*>(&ksiz), 4);
  out += key;
  return out;
}

struct Server {
  std::unique_ptr<cachet::test::ServerProcess> process;
  Server() {
    auto started = cachet::test::StartTokyoTyrant();
    REQUIRE(started.ok());
    process = std::move(started.value());
  }
  int port() const { return process->port(); }
};

}  // namespace

TEST_CASE("tt server: put, get, out and their status bytes", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  CHECK(c.Roundtrip(Put("c8 10", "k", "hello"), 1) == Hex("00"));
  CHECK(c.Roundtrip(KeyCommand("c8 30", "k"), 10) == Hex("00 00000005") + "hello");
  CHECK(c.Roundtrip(KeyCommand("c8 38", "k"), 5) == Hex("00 00000005"));
  CHECK(c.Roundtrip(KeyCommand("c8 20", "k"), 1) == Hex("00"));
  CHECK(c.Roundtrip(KeyCommand("c8 20", "k"), 1) == Hex("01"));
  CHECK(c.Roundtrip(KeyCommand("c8 30", "k"), 1) == Hex("01"));
  CHECK(c.Roundtrip(KeyCommand("c8 38", "k"), 1) == Hex("01"));
}

TEST_CASE("tt server: putkeep, putcat and putshl", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  CHECK(c.Roundtrip(Put("c8 11", "k", "a"), 1) == Hex("00"));
  CHECK(c.Roundtrip(Put("c8 11", "k", "b"), 1) == Hex("01"));
  CHECK(c.Roundtrip(Put("c8 12", "k", "bc"), 1) == Hex("00"));
  CHECK(c.Roundtrip(Put("c8 12", "new", "x"), 1) == Hex("00"));  // putcat creates
  CHECK(c.Roundtrip(KeyCommand("c8 30", "k"), 8) == Hex("00 00000003") + "abc");
  CHECK(c.Roundtrip(KeyCommand("c8 30", "new"), 6) == Hex("00 00000001") + "x");
  // putshl: ksiz vsiz width key value; keeps the last `width` bytes.
  CHECK(c.Roundtrip(Hex("c8 13 00000001 00000003 00000004") + "kdef", 1) == Hex("00"));
  CHECK(c.Roundtrip(KeyCommand("c8 30", "k"), 9) == Hex("00 00000004") + "cdef");
}

TEST_CASE("tt server: putnr answers nothing", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  // putnr then get in one write: the first byte back is get's.
  c.Send(Put("c8 18", "k", "v") + KeyCommand("c8 30", "k"));
  CHECK(c.Read(6) == Hex("00 00000001") + "v");
  CHECK(c.Read(1, 200).empty());
}

TEST_CASE("tt server: mget keeps request order and duplicates, drops misses", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  REQUIRE(c.Roundtrip(Put("c8 10", "a", "1"), 1) == Hex("00"));
  REQUIRE(c.Roundtrip(Put("c8 10", "bb", "22"), 1) == Hex("00"));
  const std::string request = Hex("c8 31 00000004 00000002") + "bb" + Hex("00000001") + "x" +
                              Hex("00000001") + "a" + Hex("00000002") + "bb";
  const std::string expected = Hex("00 00000003") + Hex("00000002 00000002") + "bb22" +
                               Hex("00000001 00000001") + "a1" + Hex("00000002 00000002") + "bb22";
  CHECK(c.Roundtrip(request, expected.size()) == expected);
  CHECK(c.Roundtrip(Hex("c8 31 00000000"), 5) == Hex("00 00000000"));
}

TEST_CASE("tt server: addint keeps a 4-byte host-order record", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  CHECK(c.Roundtrip(Hex("c8 60 00000001 00000005") + "n", 5) == Hex("00 00000005"));
  CHECK(c.Roundtrip(Hex("c8 60 00000001 fffffff9") + "n", 5) == Hex("00 fffffffe"));
  std::int32_t host = -2;
  std::string raw(reinterpret_cast<const char*>(&host), 4);
  CHECK(c.Roundtrip(KeyCommand("c8 30", "n"), 9) == Hex("00 00000004") + raw);
  // Any 4-byte record reads as an int; any other size fails.
  std::int32_t seven = 7;
  REQUIRE(c.Roundtrip(Put("c8 10", "four", std::string(reinterpret_cast<char*>(&seven), 4)), 1) ==
          Hex("00"));
  CHECK(c.Roundtrip(Hex("c8 60 00000004 00000001") + "four", 5) == Hex("00 00000008"));
  REQUIRE(c.Roundtrip(Put("c8 10", "text", "12"), 1) == Hex("00"));
  CHECK(c.Roundtrip(Hex("c8 60 00000004 00000001") + "text", 1) == Hex("01"));
}

TEST_CASE("tt server: adddouble's wire format and 8-byte record", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  const std::string one_and_half = Hex("0000000000000001 000000746a528800");
  CHECK(c.Roundtrip(Hex("c8 61 00000001") + one_and_half + "d", 17) == Hex("00") + one_and_half);
  CHECK(c.Roundtrip(Hex("c8 61 00000001") + one_and_half + "d", 17) ==
        Hex("00 0000000000000003 0000000000000000"));
  double host = 3.0;
  std::string raw(reinterpret_cast<const char*>(&host), 8);
  CHECK(c.Roundtrip(KeyCommand("c8 30", "d"), 13) == Hex("00 00000008") + raw);
  REQUIRE(c.Roundtrip(Put("c8 10", "s", "abc"), 1) == Hex("00"));
  CHECK(c.Roundtrip(Hex("c8 61 00000001") + one_and_half + "s", 1) == Hex("01"));
}

TEST_CASE("tt server: misc putlist, getlist, outlist and the five-byte failure", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  const std::string putlist = Hex("c8 90 00000007 00000000 00000004") + "putlist" +
                              Hex("00000001") + "a" + Hex("00000001") + "1" + Hex("00000001") +
                              "b" + Hex("00000001") + "2";
  CHECK(c.Roundtrip(putlist, 5) == Hex("00 00000000"));
  const std::string getlist = Hex("c8 90 00000007 00000000 00000003") + "getlist" +
                              Hex("00000001") + "b" + Hex("00000001") + "z" + Hex("00000001") + "a";
  const std::string listed = Hex("00 00000004 00000001") + "b" + Hex("00000001") + "2" +
                             Hex("00000001") + "a" + Hex("00000001") + "1";
  CHECK(c.Roundtrip(getlist, listed.size()) == listed);
  const std::string outlist =
      Hex("c8 90 00000007 00000000 00000001") + "outlist" + Hex("00000001") + "a";
  CHECK(c.Roundtrip(outlist, 5) == Hex("00 00000000"));
  CHECK(c.Roundtrip(KeyCommand("c8 30", "a"), 1) == Hex("01"));
  const std::string unknown = Hex("c8 90 00000004 00000000 00000000") + "nope";
  CHECK(c.Roundtrip(unknown, 5) == Hex("01 00000000"));
}

TEST_CASE("tt server: fwmkeys, iteration, rnum, size, vanish, sync", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  for (const char* key : {"u:1", "u:2", "v:1"}) {
    REQUIRE(c.Roundtrip(Put("c8 10", key, "x"), 1) == Hex("00"));
  }
  const std::string all_u = c.Roundtrip(Hex("c8 58 00000002 ffffffff") + "u:", 19);
  CHECK(all_u.substr(0, 5) == Hex("00 00000002"));
  CHECK(all_u.find("u:1") != std::string::npos);
  CHECK(all_u.find("u:2") != std::string::npos);
  CHECK(c.Roundtrip(Hex("c8 58 00000002 00000001") + "u:", 12).substr(0, 9) ==
        Hex("00 00000001 00000003"));
  CHECK(c.Roundtrip(Hex("c8 80"), 9) == Hex("00 0000000000000003"));
  CHECK(c.Roundtrip(Hex("c8 81"), 9).substr(0, 1) == Hex("00"));
  CHECK(c.Roundtrip(Hex("c8 50"), 1) == Hex("00"));
  int seen = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string next = c.Roundtrip(Hex("c8 51"), 8);
    if (next.substr(0, 5) == Hex("00 00000003")) ++seen;
  }
  CHECK(seen == 3);
  CHECK(c.Roundtrip(Hex("c8 51"), 1) == Hex("01"));
  CHECK(c.Roundtrip(Hex("c8 70"), 1) == Hex("00"));
  CHECK(c.Roundtrip(Hex("c8 72"), 1) == Hex("00"));
  CHECK(c.Roundtrip(Hex("c8 80"), 9) == Hex("00 0000000000000000"));
}

TEST_CASE("tt server: stat is name-tab-value lines", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  const std::string head = c.Roundtrip(Hex("c8 88"), 5);
  REQUIRE(head.size() == 5);
  CHECK(head[0] == 0);
  std::uint32_t wire_len = 0;  // unaligned in the reply: copied, not cast
  std::memcpy(&wire_len, head.data() + 1, sizeof wire_len);
  const std::uint32_t len = ntohl(wire_len);
  const std::string text = c.Read(len);
  CHECK(text.starts_with("version\t1.1.41\n"));
  CHECK(text.find("\nrnum\t0\n") != std::string::npos);
}

TEST_CASE("tt server: copy refuses '@', and restore, setmst and ext fail", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  CHECK(c.Roundtrip(KeyCommand("c8 73", "@touch /tmp/cachet-tt-pwned"), 1) == Hex("01"));
  CHECK(access("/tmp/cachet-tt-pwned", F_OK) != 0);
  CHECK(c.Roundtrip(Hex("c8 74 00000001 0000000000000000 00000000") + "x", 1) == Hex("01"));
  CHECK(c.Roundtrip(Hex("c8 78 00000001 00000001 0000000000000000 00000000") + "h", 1) ==
        Hex("01"));
  CHECK(c.Roundtrip(Hex("c8 68 00000001 00000000 00000001 00000001") + "fkv", 1) == Hex("01"));
  CHECK(c.Roundtrip(KeyCommand("c8 71", ""), 1) == Hex("00"));  // optimize
}

TEST_CASE("tt server: pipelined replies come back in order", "[ttserver]") {
  Server server;
  RawClient c(server.port());
  std::string pipeline;
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    const std::string key = "k" + std::to_string(i);
    pipeline += Put("c8 10", key, std::to_string(i));
    pipeline += KeyCommand("c8 30", key);
    pipeline += KeyCommand("c8 30", "missing");
    expected += Hex("00");
    const std::string value = std::to_string(i);
    const std::uint32_t vsiz = htonl(static_cast<std::uint32_t>(value.size()));
    expected += Hex("00") + std::string(reinterpret_cast<const char*>(&vsiz), 4) + value;
    expected += Hex("01");
  }
  CHECK(c.Roundtrip(pipeline, expected.size()) == expected);
}

TEST_CASE("tt server: over-limit and negative sizes get no reply and lose the stream",
          "[ttserver]") {
  Server server;
  const std::string cases[] = {
      Hex("c8 30 ffffffff"),                          // get, negative ksiz
      Hex("c8 30 10000001"),                          // get, ksiz 256 MiB + 1
      Hex("c8 10 00000001 ffffffff") + "k",           // put, negative vsiz
      Hex("c8 31 00100001"),                          // mget, 1048577 keys
      Hex("c8 31 ffffffff"),                          // mget, negative count
      Hex("c8 90 00000001 00000000 00100001") + "x",  // misc, too many arguments
      Hex("c8 ff"),                                   // unknown command
      Hex("ff"),                                      // wrong magic
  };
  for (const std::string& request : cases) {
    RawClient c(server.port());
    c.Send(request);
    CHECK(c.ClosedWithoutReply());
  }
  // The server itself is still serving.
  RawClient c(server.port());
  CHECK(c.Roundtrip(Put("c8 10", "k", "v"), 1) == Hex("00"));
}

TEST_CASE("tt server: SIGTERM stops it", "[ttserver]") {
  Server server;
  RawClient idle(server.port());  // an open connection must not keep it alive
  const int port = server.port();
  CHECK(server.process->Stop().ok());
  CHECK_FALSE(cachet::test::AcceptsConnections(port));
}
