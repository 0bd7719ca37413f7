// Faults and secrets with a real redis-server (and a fake one): a server killed,
// stalled and restarted under a live backend; a garbage reply; a wrong password
// that never shows, in errors, in logs or in `cachet check`; stats and flush
// with two of three servers stalled.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "launchers/redis_server.h"
#include "redis_backend.h"

using cachet::Item;
using cachet::ItemView;
using cachet::StoreMode;
using cachet::redis::RedisBackend;
using cachet::redis::RedisOptions;

namespace {

constexpr auto kIoTimeout = std::chrono::milliseconds(300);

std::unique_ptr<RedisBackend> Connect(int port, std::string password = "") {
  RedisOptions options;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port), 1});
  options.pool.connection.io_timeout = kIoTimeout;
  // No rest after failures, so a server that comes back is used at once.
  options.pool.retry_timeout = std::chrono::milliseconds(0);
  options.session.password = std::move(password);
  return std::make_unique<RedisBackend>(std::move(options));
}

// Calls `backend.Get` until it stops failing, at most 50 times 100 ms.
cachet::Status GetUntilServed(RedisBackend& backend, const std::string& key, Item* item) {
  cachet::Status s;
  for (int i = 0; i < 50; ++i) {
    s = backend.Get(key, item);
    if (!s.IsError()) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return s;
}

// stdout and stderr of a shell command.
std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char chunk[4096];
  for (std::size_t n; (n = fread(chunk, 1, sizeof chunk, pipe)) > 0;) out.append(chunk, n);
  pclose(pipe);
  return out;
}

// A fake Redis on a loopback port that answers the first connection's request
// with `first_reply` and the second connection's with a bulk "v".
// Each wait is bounded by poll timeouts.
class FakeServer {
 public:
  explicit FakeServer(std::string first_reply) : first_reply_(std::move(first_reply)) {
    listener_ = cachet::test::ListenOnLoopback(4, &port_);
    REQUIRE(listener_ >= 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    thread_.join();
    close(listener_);
  }
  int port() const { return port_; }

 private:
  static bool Readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 3000) == 1;
  }
  void Serve() {
    for (int connection = 0; connection < 2 && Readable(listener_); ++connection) {
      int fd = accept(listener_, nullptr, nullptr);
      char request[4096];
      // The backend sends no handshake (no password, no client name): the
      // first request is the GET.
      if (Readable(fd) && read(fd, request, sizeof request) > 0) {
        std::string reply = connection == 0 ? first_reply_ : "$1\r\nv\r\n";
        // A client that went away is no concern of this fake.
        [[maybe_unused]] ssize_t written = write(fd, reply.data(), reply.size());
      }
      close(fd);
    }
  }

  std::string first_reply_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("a killed server is an error, and is served again after a restart", "[redis][faults]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect((*server)->port());
  REQUIRE(backend->Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE((*server)->Kill().ok());
  Item item;
  cachet::Status down = backend->Get("k", &item);
  CHECK(down.IsError());
  CHECK_FALSE(down.IsNotFound());
  std::vector<cachet::Operation> batch(3);
  for (auto& op : batch) op.key = "k";
  backend->Execute(batch);
  for (auto& op : batch) CHECK(op.status.IsError());

  // The same backend, never recreated, is served once the server is back.
  REQUIRE((*server)->Restart().ok());
  CHECK(GetUntilServed(*backend, "k", &item).IsNotFound());  // diskless: the data is gone
  CHECK(backend->Store(StoreMode::kSet, "k", ItemView("again"), {}).ok());
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "again");
}

TEST_CASE("a stalled server times out, and answers again when it resumes", "[redis][faults]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  auto backend = Connect((*server)->port());
  REQUIRE(backend->Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
  REQUIRE((*server)->Pause().ok());
  Item item;
  const auto started = std::chrono::steady_clock::now();
  cachet::Status stalled = backend->Get("k", &item);
  const auto waited = std::chrono::steady_clock::now() - started;
  INFO("waited " << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                 << " ms for an io_timeout of " << kIoTimeout.count() << " ms");
  CHECK(stalled.IsTimeout());
  std::vector<cachet::Operation> batch(2);
  for (auto& op : batch) op.key = "k";
  backend->Execute(batch);
  for (auto& op : batch) CHECK(op.status.IsTimeout());
  REQUIRE((*server)->Resume().ok());
  REQUIRE(GetUntilServed(*backend, "k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("a garbage reply is a protocol error and drops only that connection", "[redis][faults]") {
  FakeServer fake("?what is this\r\n");
  auto backend = Connect(fake.port());
  Item item;
  cachet::Status garbage = backend->Get("k", &item);
  INFO(garbage.ToString());
  CHECK(garbage.IsProtocolError());
  // A fresh connection: the next reply is read from a clean stream.
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("a wrong password is auth_failed and is never shown", "[redis][faults][security]") {
  const std::string secret = "wrong-Secret-4242";
  auto server = cachet::test::StartRedis({"--requirepass", "the-right-one"});
  REQUIRE(server.ok());
  auto backend = Connect((*server)->port(), secret);
  Item item;
  cachet::Status s = backend->Get("k", &item);
  CHECK(s.IsAuthFailed());
  CHECK(s.message().find("password") != std::string_view::npos);  // says what to check
  CHECK(s.ToString().find(secret) == std::string::npos);
  std::vector<cachet::Operation> batch(2);
  for (auto& op : batch) op.key = "k";
  backend->Execute(batch);
  for (auto& op : batch) {
    CHECK(op.status.IsAuthFailed());
    CHECK(op.status.ToString().find(secret) == std::string::npos);
  }

  // The CLI, logging everything: neither `check` nor a failing `get` shows it.
  const std::string config_path = CACHET_BINARY_DIR "/redis-faults-secret.conf";
  {
    std::ofstream config(config_path);
    config << "[cache]\nbackend = redis\nlog_level = trace\n[redis]\nservers = "
           << (*server)->address() << "\npassword = " << secret << "\n";
  }
  const std::string cli = CACHET_BINARY_DIR "/bin/cachet -c " + config_path;
  std::string check = Run(cli + " check");
  CHECK(check.find("password") != std::string::npos);
  CHECK(check.find(secret) == std::string::npos);
  std::string get = Run(cli + " get k");
  CHECK(get.find("auth") != std::string::npos);
  CHECK(get.find(secret) == std::string::npos);
  std::remove(config_path.c_str());
}

TEST_CASE("a lone server at rest makes every operation of a batch unavailable", "[redis][faults]") {
  auto server = cachet::test::StartRedis();
  REQUIRE(server.ok());
  const int port = (*server)->port();
  REQUIRE((*server)->Stop().ok());
  for (bool failover : {false, true}) {
    INFO("failover " << failover);
    RedisOptions options;
    options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port), 1});
    options.pool.connection.io_timeout = kIoTimeout;
    options.pool.failure_limit = 1;
    options.pool.retry_timeout = std::chrono::minutes(10);  // rests for the whole test
    options.pool.failover = failover;
    RedisBackend backend(std::move(options));
    Item item;
    CHECK(backend.Get("k", &item).IsError());  // the one failure that puts it to rest

    std::vector<cachet::Operation> reads(3);
    for (auto& op : reads) op.key = "k";
    std::vector<cachet::Operation> mixed(2);
    mixed[0].kind = cachet::OpKind::kStore;
    mixed[0].key = "k";
    mixed[0].item = ItemView("w");
    mixed[1].key = "k";
    for (auto* batch : {&reads, &mixed}) {
      backend.Execute(*batch);
      for (auto& op : *batch) {
        CHECK(op.status.IsUnavailable());
        CHECK(op.status.message().find("marked dead") != std::string_view::npos);
      }
    }
  }
}

TEST_CASE("stats and flush ask every server at once: two stalled cost one timeout, not two",
          "[redis][faults]") {
  std::vector<std::unique_ptr<cachet::test::ServerProcess>> servers;
  RedisOptions options;
  for (int i = 0; i < 3; ++i) {
    auto server = cachet::test::StartRedis();
    REQUIRE(server.ok());
    options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>((*server)->port()), 1});
    servers.push_back(std::move(*server));
  }
  options.pool.connection.io_timeout = std::chrono::milliseconds(2000);
  options.pool.connection.request_timeout = std::chrono::milliseconds(2000);
  options.pool.failure_limit = 3;  // the stalled servers are asked by both calls, not put to rest
  RedisBackend backend(std::move(options));
  cachet::StatsMap stats;
  REQUIRE(backend.Stats(&stats).ok());  // every server connected and answering
  REQUIRE(servers[0]->Pause().ok());
  REQUIRE(servers[2]->Pause().ok());
  for (const bool flush : {false, true}) {
    INFO((flush ? "flush" : "stats"));
    const auto started = std::chrono::steady_clock::now();
    const cachet::Status s = flush ? backend.Flush() : backend.Stats(&stats);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    INFO(s.ToString() << ", after " << took.count() << " ms");
    CHECK(s.IsTimeout());
    // 2 s, plus a loaded machine's slack; one stalled server after the other would be 4 s.
    CHECK(took < std::chrono::milliseconds(3000));
    if (!flush) {
      // The live server's lines are there, named by it; the stalled servers' are not.
      const std::string live = servers[1]->address() + " ";
      const std::string stalled = servers[0]->address() + " ";
      bool live_seen = false;
      bool stalled_seen = false;
      for (const auto& [name, value] : stats) {
        live_seen = live_seen || name.rfind(live, 0) == 0;
        stalled_seen = stalled_seen || name.rfind(stalled, 0) == 0;
      }
      CHECK(live_seen);
      CHECK_FALSE(stalled_seen);
    }
  }
  REQUIRE(servers[0]->Resume().ok());
  REQUIRE(servers[2]->Resume().ok());
}
