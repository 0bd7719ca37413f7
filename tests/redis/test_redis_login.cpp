// A Redis batch over several servers connects, and logs in, to all of them at
// once: fake servers on loopback ports answer a connection's login (AUTH,
// SELECT) only once every one of them has received one, so a client that logs
// in to one server after another waits on the first past its I/O timeout. A
// login refused by one server fails that server's operations only, with a
// clear error, and its connection is closed before any command is sent.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "launchers/server_process.h"
#include "redis_backend.h"
#include "support/scripted_server.h"

namespace cachet::redis {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A fake Redis for one connection. Once the connection's first bytes (its
// login) arrive it counts them in `logins`, waits until `servers` logins were
// counted (or `gate_wait` passed), then answers each request: AUTH with +OK
// (or WRONGPASS when `refuse`), MGET with "v" for every key, PING with +PONG,
// anything else with +OK. Serves until the client closes; every wait is bounded.
class GatedRedis {
 public:
  GatedRedis(std::atomic<int>* logins, int servers, milliseconds gate_wait, bool refuse = false)
      : logins_(logins),
        servers_(servers),
        gate_wait_(gate_wait),
        refuse_(refuse),
        listener_(test::ListenOnLoopback(1, &port_)) {
    REQUIRE(listener_ >= 0);
    thread_ = std::jthread([this] { Serve(); });
  }
  // The thread ends (joined) before the listener it may poll is closed.
  ~GatedRedis() {
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  GatedRedis(const GatedRedis&) = delete;
  GatedRedis& operator=(const GatedRedis&) = delete;

  int port() const { return port_; }
  // The requests received, in order (read once the client has closed).
  std::vector<std::string> requests() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  // True once the client closed the connection.
  bool closed() const { return closed_.load(); }

 private:
  static bool Readable(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) == 1;
  }

  std::string Answer(const std::string& request) const {
    if (request.find("AUTH") != std::string::npos) {
      return refuse_ ? "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                     : "+OK\r\n";
    }
    if (request.find("MGET") != std::string::npos) {
      // "*N\r\n": the command and N - 1 keys.
      const int keys = std::stoi(request.substr(1)) - 1;
      std::string reply = "*" + std::to_string(keys) + "\r\n";
      for (int i = 0; i < keys; ++i) reply += "$1\r\nv\r\n";
      return reply;
    }
    if (request.find("PING") != std::string::npos) return "+PONG\r\n";
    return "+OK\r\n";
  }

  void Serve() {
    if (!Readable(listener_, 5000)) return;
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    if (Readable(fd, 3000)) ++*logins_;
    const Clock::time_point end = Clock::now() + gate_wait_;
    while (logins_->load() < servers_ && Clock::now() < end) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    const test::RequestFramer framer = test::RespRequests();
    std::string pending;
    // Bounded: each pass reads within 3 s or ends.
    while (Readable(fd, 3000)) {
      char chunk[4096];
      const ssize_t got = ::read(fd, chunk, sizeof chunk);
      if (got <= 0) {
        closed_ = true;
        break;
      }
      pending.append(chunk, static_cast<std::size_t>(got));
      std::string replies;
      for (std::size_t size; (size = framer(pending)) > 0; pending.erase(0, size)) {
        const std::string request = pending.substr(0, size);
        replies += Answer(request);
        const std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(request);
      }
      // A client that went away is no concern of this fake.
      [[maybe_unused]] const ssize_t written = ::write(fd, replies.data(), replies.size());
    }
    ::close(fd);
  }

  std::atomic<int>* logins_;
  int servers_;
  milliseconds gate_wait_;
  bool refuse_;
  int port_ = 0;  // set by the listener's opening
  int listener_ = -1;
  std::atomic<bool> closed_{false};
  mutable std::mutex mutex_;  // guards requests_
  std::vector<std::string> requests_;
  std::jthread thread_;
};

// A backend over `servers`, with a password and a database to select, so a
// new connection's login is AUTH then SELECT.
std::unique_ptr<RedisBackend> BackendOver(const std::vector<std::unique_ptr<GatedRedis>>& servers) {
  RedisOptions options;
  options.pool.connection.io_timeout = milliseconds(1000);
  options.pool.connection.request_timeout = milliseconds(3000);
  options.session.password = "secret";
  options.session.db = 2;
  options.servers.reserve(servers.size());
  std::transform(
      servers.begin(), servers.end(), std::back_inserter(options.servers),
      [](const std::unique_ptr<GatedRedis>& server) {
        return net::ServerAddress{"127.0.0.1", static_cast<std::uint16_t>(server->port()), 1};
      });
  return std::make_unique<RedisBackend>(std::move(options));
}

// Gets (the default kind) of 60 keys: with three servers, each owns some.
struct SixtyGets {
  SixtyGets() {
    for (int i = 0; i < 60; ++i) keys.push_back("key" + std::to_string(i));
    ops.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) ops[i].key = keys[i];
  }
  std::vector<std::string> keys;  // what the operations' keys view
  std::vector<Operation> ops;
};

bool Has(const std::vector<std::string>& requests, const char* word) {
  for (const std::string& request : requests) {
    if (request.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a batch logs in to every new connection at once", "[redis][login]") {
  // Logins one after another would wait on the first server past its
  // io_timeout (1 s), since it answers only after 3 logins (or 3 s).
  constexpr int kServers = 3;
  std::atomic<int> logins{0};
  std::vector<std::unique_ptr<GatedRedis>> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.push_back(std::make_unique<GatedRedis>(&logins, kServers, milliseconds(3000)));
  }
  auto backend = BackendOver(servers);
  SixtyGets gets;
  std::vector<Operation>& ops = gets.ops;
  backend->Execute(ops);
  for (const Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    CHECK(op.status.ok());
    CHECK(op.result.value == "v");
  }
  backend.reset();  // each fake serves until its client closes
  for (const auto& server : servers) {
    const std::vector<std::string> requests = server->requests();
    REQUIRE(requests.size() == 4);  // the login (closed by PING) first, then the batch
    CHECK(requests[0].find("AUTH") != std::string::npos);
    CHECK(requests[1].find("SELECT") != std::string::npos);
    CHECK(requests[2].find("PING") != std::string::npos);
    CHECK(requests[3].find("MGET") != std::string::npos);
  }
}

TEST_CASE("a refused login fails its server's operations only and closes its connection",
          "[redis][login]") {
  constexpr int kServers = 3;
  std::atomic<int> logins{0};
  std::vector<std::unique_ptr<GatedRedis>> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.push_back(
        std::make_unique<GatedRedis>(&logins, kServers, milliseconds(3000), /*refuse=*/i == 0));
  }
  auto backend = BackendOver(servers);
  SixtyGets gets;
  std::vector<Operation>& ops = gets.ops;
  backend->Execute(ops);
  int refused = 0;
  for (const Operation& op : ops) {
    INFO(op.key << ": " << op.status.ToString());
    if (op.status.ok()) {
      CHECK(op.result.value == "v");
      continue;
    }
    ++refused;
    CHECK(op.status.IsAuthFailed());
    CHECK(op.status.message().find("password") != std::string_view::npos);  // says what to check
    CHECK(op.status.ToString().find("secret") == std::string::npos);
  }
  CHECK(refused > 0);
  CHECK(refused < static_cast<int>(ops.size()));
  // The refused connection is closed at once, before any command went out.
  for (int i = 0; i < 300 && !servers[0]->closed(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  CHECK(servers[0]->closed());
  CHECK_FALSE(Has(servers[0]->requests(), "MGET"));
  backend.reset();
}

}  // namespace cachet::redis
