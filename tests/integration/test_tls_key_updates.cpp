// Real stores (memcached, redis-server) behind a TLS front held by the test
// that sends a TLS 1.3 key update, asking for one back, just before every
// reply: cachet reads it with the reply, so its next write must begin with a
// key update of its own; single operations, large values and batches over two
// servers. Every value must come back byte for byte.
#include <netinet/in.h>
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
#include <utility>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_server.h"
#include "support/fake_tls.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;

// TLS on a free loopback port in front of a plain server on `backend_port`:
// every connection's bytes are passed on both ways, and every piece of a
// reply goes out behind a key update that asks the client for one back. Up
// to 8 connections; each wait is bounded, and everything stops with the object.
class KeyUpdatingFront {
 public:
  explicit KeyUpdatingFront(int backend_port) : backend_port_(backend_port) {
    listener_ = ListenOnLoopback(8, &port_);
    REQUIRE(listener_ >= 0);
    ctx_ = net::fake_tls::ServerContext();
    SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
    // A key update from the client ends SSL_read (want read) instead of
    // blocking it until the request behind it comes.
    SSL_CTX_clear_mode(ctx_, SSL_MODE_AUTO_RETRY);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~KeyUpdatingFront() {
    stop_ = true;
    acceptor_.join();
    for (std::thread& t : connections_) t.join();
    ::close(listener_);
    SSL_CTX_free(ctx_);
  }
  KeyUpdatingFront(const KeyUpdatingFront&) = delete;
  KeyUpdatingFront& operator=(const KeyUpdatingFront&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Key updates asked for so far, and those the clients sent.
  int key_updates() const { return key_updates_.load(); }
  int answers() const { return answers_.load(); }

 private:
  void Accept() {
    while (!stop_ && connections_.size() < 8) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd >= 0) connections_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // A plain connection to the backend, or -1.
  int ConnectBackend() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(backend_port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      return fd;
    }
    if (fd >= 0) ::close(fd);
    return -1;
  }

  void Serve(int client) {
    net::fake_tls::ServerSide side(ctx_, client, milliseconds(2000));
    SSL_set_msg_callback(side.ssl(), &CountAnswers);
    SSL_set_msg_callback_arg(side.ssl(), &answers_);
    const int backend = ConnectBackend();
    if (backend >= 0 && SSL_accept(side.ssl()) == 1) Relay(side.ssl(), client, backend);
    if (backend >= 0) ::close(backend);
  }

  // OpenSSL's message callback: counts the key updates received.
  static void CountAnswers(int write_p, int, int content_type, const void* buf, std::size_t len,
                           SSL*, void* answers) {
    if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
        *static_cast<const unsigned char*>(buf) == SSL3_MT_KEY_UPDATE) {
      ++*static_cast<std::atomic<int>*>(answers);
    }
  }

  // Passes bytes both ways until either side closes or the front stops.
  void Relay(SSL* ssl, int client, int backend) {
    std::vector<char> chunk(64 * 1024);
    while (!stop_) {
      pollfd p[2] = {{client, POLLIN, 0}, {backend, POLLIN, 0}};
      if (SSL_pending(ssl) == 0 && ::poll(p, 2, 100) <= 0) continue;
      if (SSL_pending(ssl) > 0 || (p[0].revents & (POLLIN | POLLHUP)) != 0) {
        const int n = SSL_read(ssl, chunk.data(), static_cast<int>(chunk.size()));
        if (n <= 0 && SSL_get_error(ssl, n) != SSL_ERROR_WANT_READ) return;  // closed
        if (n > 0 && ::send(backend, chunk.data(), static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) {
          return;
        }
      }
      if ((p[1].revents & (POLLIN | POLLHUP)) != 0) {
        const ssize_t n = ::recv(backend, chunk.data(), chunk.size(), 0);
        if (n <= 0) return;
        // SSL_write sends the key update first, then the reply.
        if (SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) != 1) return;
        ++key_updates_;
        if (SSL_write(ssl, chunk.data(), static_cast<int>(n)) != n) return;
      }
    }
  }

  int backend_port_;
  int listener_ = -1;
  int port_ = 0;
  SSL_CTX* ctx_ = nullptr;
  std::atomic<bool> stop_{false};
  std::atomic<int> key_updates_{0};
  std::atomic<int> answers_{0};
  std::thread acceptor_;
  std::vector<std::thread> connections_;  // only the acceptor adds, before the join
};

enum class Store { kRedis, kMemcached };

std::string NameOf(Store store) { return store == Store::kRedis ? "redis" : "memcached"; }

std::unique_ptr<ServerProcess> StartPlain(Store store) {
  auto started = store == Store::kRedis ? StartRedis() : StartMemcached();
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  return std::move(started).value();
}

std::unique_ptr<Cache> OpenOverTls(Store store, const std::string& servers) {
  const std::string text = "[cache]\nbackend = " + NameOf(store) + "\nnamespace = t:\n[" +
                           NameOf(store) + "]\nservers = " + servers +
                           "\nio_timeout_ms = 1000\nretry_timeout_ms = 0\ntls = true\n"
                           "tls_ca_file = " +
                           net::fake_tls::Certificates().ca() + "\n";
  auto config = Config::Parse(text, "key update test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

TEST_CASE("TLS: a server asking for a key update with every reply", "[tls][key-update]") {
  const Store store = GENERATE(Store::kRedis, Store::kMemcached);
  INFO(NameOf(store));
  auto server = StartPlain(store);
  KeyUpdatingFront front(server->port());
  auto cache = OpenOverTls(store, front.address());

  for (int i = 0; i < 20; ++i) {
    const std::string key = "k" + std::to_string(i);
    REQUIRE(cache->Set<std::string>(key, "value " + std::to_string(i)).ok());
    auto found = cache->Get<std::string>(key);
    INFO(found.status().ToString());
    REQUIRE(found.hit());
    CHECK(found.value() == "value " + std::to_string(i));
  }
  // Many records each way: the client's key update goes out ahead of a
  // request that fills its socket.
  std::string large(1000 * 1000, '\0');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 131 % 251);
  for (int round = 0; round < 3; ++round) {
    const Status stored = cache->Set<std::string>("large", large);
    INFO(stored.ToString());
    REQUIRE(stored.ok());
    auto got = cache->Get<std::string>("large");
    INFO(got.status().ToString());
    REQUIRE(got.hit());
    CHECK(got.value() == large);
  }
  CHECK(front.key_updates() >= 46);  // one per reply at least
  CHECK(front.answers() >= 45);      // each but the last answered by the next request
}

TEST_CASE("TLS: batches over two servers asking for key updates", "[tls][key-update][batch]") {
  const Store store = GENERATE(Store::kRedis, Store::kMemcached);
  INFO(NameOf(store));
  auto first = StartPlain(store);
  auto second = StartPlain(store);
  KeyUpdatingFront first_front(first->port());
  KeyUpdatingFront second_front(second->port());
  auto both = OpenOverTls(store, first_front.address() + "," + second_front.address());
  std::vector<std::string> keys;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < 60; ++i) {
    keys.push_back("batch" + std::to_string(i));
    pairs.emplace_back(keys.back(), std::string(40 * 1024 + i, static_cast<char>('a' + i % 26)));
  }
  for (int round = 0; round < 3; ++round) {
    for (const Status& s : both->SetMulti<std::string>(pairs)) {
      INFO(s.ToString());
      REQUIRE(s.ok());
    }
    auto many = both->GetMulti<std::string>(keys);
    REQUIRE(many.size() == keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      INFO(keys[i] << " " << many[i].status().ToString());
      REQUIRE(many[i].hit());
      CHECK(many[i].value() == pairs[i].second);
    }
  }
  // Both servers took part, and asked.
  CHECK(first_front.key_updates() >= 6);
  CHECK(second_front.key_updates() >= 6);
  CHECK(first_front.answers() >= 5);
  CHECK(second_front.answers() >= 5);
}

}  // namespace
}  // namespace cachet::test
