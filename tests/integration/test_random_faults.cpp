// Seeded random faults between cachet and two real servers, on every network store:
// a front held by the test passes requests on untouched and, now and then, does
// to a piece of the server's replies what a misbehaving network or server does
// (holds it back past io_timeout, sends it in small pieces, sends it twice,
// cuts it short, or closes the connection); between calls it sends idle
// connections their last reply again, or closes them all. The client keeps, for
// every key, the values it may hold (a write that failed may land at any later
// time), and every value read must be one of them: no fault may hand one
// key's value to another, or an old value as new. Calls fail only for the
// faults that reach them; what arrives at an idle connection costs no call.
// The client reaches the front over TCP, a Unix socket or TLS (the front ends
// TLS, so the faults fall on reply bytes, split and cut mid-record too).
// The same with two threads on one Cache, with and without max_connections;
// over a Redis Cluster whose slots move under the calls; and with memcached
// failover, where a read may miss but never be older.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_cluster.h"
#include "launchers/redis_server.h"
#include "launchers/server_process.h"
#include "launchers/tokyotyrant_server.h"
#include "support/fake_tls.h"
#include "support/waits.h"

namespace cachet::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Long enough that a loaded machine seldom stalls a call past it.
constexpr milliseconds kIoTimeout{250};

// How the client reaches a front; the front reaches its server over TCP.
enum class Transport { kTcp, kUnix, kTls };

// A front for the server on loopback port `server_port`, which the client
// reaches over `transport`. Bytes from the client go to the server as they
// come; each piece read from the server meets a fault with probability
// `per_mille` / 1000. Over TLS the front ends the client's TLS: a piece is
// sealed as it comes (a doubled one as one record holding the reply twice),
// and the fault's holds, splits and cuts fall on the sealed bytes. One thread
// runs every connection without blocking; each wait is bounded, and everything
// stops with the object. With `doubles` false no piece is sent twice: where a
// reply ends with no delimiter (Tokyo Tyrant), a doubled piece in the middle of
// a value is a corrupt value, which no reader can tell, not a reply too many.
class FaultyFront {
 public:
  FaultyFront(int server_port, std::uint32_t seed, int per_mille, bool doubles,
              Transport transport = Transport::kTcp)
      : server_port_(server_port), random_(seed), per_mille_(per_mille), doubles_(doubles) {
    if (transport == Transport::kUnix) {
      directory_ = MakeTempDirectory("cachet-faults-");
      REQUIRE(!directory_.empty());
      listener_ = ListenOnPath(directory_ + "/front.sock");
    } else {
      listener_ = ListenOnLoopback(16, &port_);
    }
    REQUIRE(listener_ >= 0);
    if (transport == Transport::kTls) tls_ = net::fake_tls::ServerContext();
    SetNonBlocking(listener_);
    thread_ = std::thread([this] { Run(); });
  }
  ~FaultyFront() {
    stop_ = true;
    thread_.join();
    for (Link& link : links_) CloseLink(link);
    ::close(listener_);
    if (tls_ != nullptr) SSL_CTX_free(tls_);
    std::error_code ignored;
    if (!directory_.empty()) std::filesystem::remove_all(directory_, ignored);
  }
  FaultyFront(const FaultyFront&) = delete;
  FaultyFront& operator=(const FaultyFront&) = delete;

  std::string address() const {
    if (!directory_.empty()) return "unix:" + directory_ + "/front.sock";
    return "127.0.0.1:" + std::to_string(port_);
  }
  int port() const { return port_; }
  // From now on, each piece meets a fault with probability `per_mille` / 1000.
  void SetFaultRate(int per_mille) { per_mille_ = per_mille; }

  // Between calls: every open connection is sent the last piece of reply it
  // was sent, again (bytes that arrive while the client holds it idle).
  void RepeatLastReplies() { Command(kRepeat); }
  // Between calls: every connection is closed, as a server's idle timeout does.
  void CloseAll() { Command(kCloseAll); }
  // Faults that may fail the call they reach: a hold past io_timeout, a
  // piece sent twice, a reply cut short, a close.
  int disruptions() const { return disruptions_.load(); }
  // Faults that must cost no call: a short hold, a piece sent in small parts.
  int harmless() const { return harmless_.load(); }

 private:
  // A piece of reply on its way to the client, due at `at`.
  struct Piece {
    Clock::time_point at;
    std::string bytes;
    bool close_after = false;  // the connection ends once it is sent
  };
  struct Link {
    int client = -1;
    int server = -1;
    SSL* tls = nullptr;          // the client's TLS session, over memory BIOs
    std::string to_server;       // request bytes the server has not taken yet
    std::vector<Piece> queued;   // reply pieces by due time, in order
    std::string to_client;       // due bytes the client has not taken yet
    bool close_when_sent = false;
    bool doomed = false;         // cut short: what the server sends next is dropped
    std::string last_reply;
    bool closed = false;
  };
  enum CommandKind { kNone, kRepeat, kCloseAll };

  static void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }
  static int ListenOnPath(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::listen(fd, 16) == 0) {
      return fd;
    }
    if (fd >= 0) ::close(fd);
    return -1;
  }
  // Each piece goes out as it is sent, as the servers send theirs: with Nagle's
  // rule, bytes sent to an idle client would wait for its next request's ACK
  // and arrive after that request, where no reader can tell them from its reply.
  static void SendAtOnce(int fd) {
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }

  // Asks the front's thread to run `kind` and waits (at most 2 s) until it has.
  void Command(CommandKind kind) {
    std::unique_lock<std::mutex> lock(mutex_);
    command_ = kind;
    REQUIRE(done_.wait_for(lock, std::chrono::seconds(2), [&] { return command_ == kNone; }));
  }

  int ConnectServer() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(server_port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      SetNonBlocking(fd);
      SendAtOnce(fd);
      return fd;
    }
    if (fd >= 0) ::close(fd);
    return -1;
  }

  static void CloseLink(Link& link) {
    if (link.closed) return;
    ::close(link.client);
    ::close(link.server);
    SSL_free(link.tls);
    link.tls = nullptr;
    link.closed = true;
  }

  // What TLS has to send the client: records sealed, handshake messages.
  static std::string Drain(Link& link) {
    BIO* out = SSL_get_wbio(link.tls);
    std::string bytes(BIO_ctrl_pending(out), '\0');
    if (!bytes.empty()) bytes.resize(std::max(0, BIO_read(out, bytes.data(), int(bytes.size()))));
    return bytes;
  }
  // `plain` as the client receives it: as it is, or sealed in TLS records.
  static std::string Seal(Link& link, const std::string& plain) {
    if (link.tls == nullptr || plain.empty()) return plain;
    REQUIRE(SSL_write(link.tls, plain.data(), static_cast<int>(plain.size())) ==
            static_cast<int>(plain.size()));  // a memory BIO takes everything
    return Drain(link);
  }
  // Queues `bytes` for the client behind what is queued, untouched.
  static void Queue(Link& link, std::string bytes) {
    if (bytes.empty()) return;
    Clock::time_point at = Clock::now();
    if (!link.queued.empty()) at = std::max(at, link.queued.back().at);
    link.queued.push_back({at, std::move(bytes)});
  }

  void Run() {
    std::vector<char> chunk(64 * 1024);
    while (!stop_) {
      RunCommand();
      const Clock::time_point now = Clock::now();
      for (Link& link : links_) Release(link, now);
      std::erase_if(links_, [](const Link& link) { return link.closed; });

      std::vector<pollfd> polled{{listener_, POLLIN, 0}};
      for (const Link& link : links_) {
        const short to_client = link.to_client.empty() ? 0 : POLLOUT;
        const short to_server = link.to_server.empty() ? 0 : POLLOUT;
        polled.push_back({link.client, static_cast<short>(POLLIN | to_client), 0});
        polled.push_back({link.server, static_cast<short>(POLLIN | to_server), 0});
      }
      ::poll(polled.data(), polled.size(), 2);
      if ((polled[0].revents & POLLIN) != 0) Accept();
      for (std::size_t i = 0; i < links_.size() && 1 + 2 * i < polled.size(); ++i) {
        Link& link = links_[i];
        const short from_client = polled[1 + 2 * i].revents;
        const short from_server = polled[2 + 2 * i].revents;
        if ((from_client & (POLLIN | POLLHUP | POLLERR)) != 0) ReadClient(link, chunk);
        if (!link.closed && (from_server & (POLLIN | POLLHUP | POLLERR)) != 0) {
          ReadServer(link, chunk);
        }
        if (!link.closed) Flush(link);
      }
    }
  }

  void RunCommand() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (command_ == kNone) return;
    for (Link& link : links_) {
      if (command_ == kCloseAll) {
        // Over TLS, half the time the server ends the session first (close_notify).
        if (link.tls != nullptr && random_() % 2 == 0 && SSL_shutdown(link.tls) >= 0) {
          const std::string notify = Drain(link);
          ::send(link.client, notify.data(), notify.size(), MSG_NOSIGNAL);
        }
        CloseLink(link);
      } else if (!link.last_reply.empty() && link.queued.empty() && link.to_client.empty()) {
        // Blocking is not needed: a few bytes fit any socket buffer.
        const std::string again = Seal(link, link.last_reply);
        ::send(link.client, again.data(), again.size(), MSG_NOSIGNAL);
      }
    }
    command_ = kNone;
    done_.notify_all();
  }

  void Accept() {
    const int client = ::accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    const int server = ConnectServer();
    if (server < 0) {
      ::close(client);
      return;
    }
    SetNonBlocking(client);
    if (directory_.empty()) SendAtOnce(client);
    Link link;
    link.client = client;
    link.server = server;
    if (tls_ != nullptr) {
      link.tls = SSL_new(tls_);
      SSL_set_bio(link.tls, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
      SSL_set_accept_state(link.tls);
    }
    links_.push_back(std::move(link));
  }

  void ReadClient(Link& link, std::vector<char>& chunk) {
    const ssize_t n = ::recv(link.client, chunk.data(), chunk.size(), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN)) return CloseLink(link);
    if (n < 0) return;
    if (link.tls == nullptr) {
      link.to_server.append(chunk.data(), static_cast<std::size_t>(n));
      return;
    }
    BIO_write(SSL_get_rbio(link.tls), chunk.data(), static_cast<int>(n));
    while (true) {
      const int got = SSL_read(link.tls, chunk.data(), static_cast<int>(chunk.size()));
      if (got <= 0) {
        const bool wants_more = SSL_get_error(link.tls, got) == SSL_ERROR_WANT_READ;
        Queue(link, Drain(link));  // the handshake's answers, session tickets
        if (!wants_more) CloseLink(link);  // the client's close_notify, or a TLS error
        return;
      }
      link.to_server.append(chunk.data(), static_cast<std::size_t>(got));
    }
  }

  // A piece from the server: queued as it is, or with one fault.
  void ReadServer(Link& link, std::vector<char>& chunk) {
    const ssize_t n = ::recv(link.server, chunk.data(), chunk.size(), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN)) return CloseLink(link);
    if (n < 0 || link.doomed) return;
    link.last_reply.assign(chunk.data(), static_cast<std::size_t>(n));
    const bool fault = static_cast<int>(random_() % 1000) < per_mille_;
    const unsigned kind = fault ? random_() % 6 : 6;
    if (kind == 5) {  // the connection ends with nothing more sent
      ++disruptions_;
      return CloseLink(link);
    }
    // Sealed in order, as TLS numbers its records; twice, in one write (one
    // reply too many), where a doubled piece can be told.
    const bool doubled = kind == 3 && doubles_;
    std::string piece = Seal(link, doubled ? link.last_reply + link.last_reply : link.last_reply);
    // Pieces keep their order: none is due before the one queued ahead of it.
    Clock::time_point at = Clock::now();
    if (!link.queued.empty()) at = std::max(at, link.queued.back().at);
    switch (kind) {
      case 0:  // held past io_timeout
        ++disruptions_;
        link.queued.push_back({at + kIoTimeout * 2, std::move(piece)});
        break;
      case 1:  // held, but well within io_timeout
        ++harmless_;
        link.queued.push_back({at + kIoTimeout / 6, std::move(piece)});
        break;
      case 2: {  // in up to eight parts, a millisecond apart
        ++harmless_;
        const std::size_t part = std::max<std::size_t>(1, piece.size() / 8);
        for (std::size_t from = 0; from < piece.size(); from += part) {
          at += milliseconds(1);
          link.queued.push_back({at, piece.substr(from, part)});
        }
        break;
      }
      case 4: {  // cut short, then the connection ends
        ++disruptions_;
        const std::size_t keep = random_() % piece.size();
        link.queued.push_back({at, piece.substr(0, keep), true});
        link.doomed = true;
        break;
      }
      default:  // as it came, or doubled above
        if (doubled) ++disruptions_;
        link.queued.push_back({at, std::move(piece)});
    }
  }

  // Moves the pieces that are due to the client's outgoing bytes.
  static void Release(Link& link, Clock::time_point now) {
    std::size_t due = 0;
    while (due < link.queued.size() && link.queued[due].at <= now) {
      link.to_client += link.queued[due].bytes;
      link.close_when_sent = link.close_when_sent || link.queued[due].close_after;
      ++due;
    }
    link.queued.erase(link.queued.begin(), link.queued.begin() + static_cast<long>(due));
  }

  static void Flush(Link& link) {
    if (!link.to_server.empty()) {
      const ssize_t n = ::send(link.server, link.to_server.data(), link.to_server.size(),
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) link.to_server.erase(0, static_cast<std::size_t>(n));
    }
    if (!link.to_client.empty()) {
      const ssize_t n = ::send(link.client, link.to_client.data(), link.to_client.size(),
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN) return CloseLink(link);  // the client closed it
      if (n > 0) link.to_client.erase(0, static_cast<std::size_t>(n));
    }
    if (link.close_when_sent && link.to_client.empty() && link.queued.empty()) CloseLink(link);
  }

  int server_port_;
  int listener_ = -1;
  int port_ = 0;
  std::mt19937 random_;
  std::atomic<int> per_mille_;
  bool doubles_;
  std::string directory_;    // the Unix socket's, or empty
  SSL_CTX* tls_ = nullptr;   // with TLS
  std::vector<Link> links_;  // the front's thread's alone
  std::mutex mutex_;         // guards command_
  std::condition_variable done_;
  CommandKind command_ = kNone;
  std::atomic<bool> stop_{false};
  std::atomic<int> disruptions_{0};
  std::atomic<int> harmless_{0};
  std::thread thread_;
};

// What each key may hold now (nullopt: no value). A write that went through
// leaves its value; one that failed may land at any later time, even after
// writes that followed it: a request the server reads late (a server thread
// that ran late on a loaded machine, bytes still on their way) is carried out
// after a later request on another connection. So a failed write's value stays
// possible until it is seen; each write lands at most once.
class Ledger {
 public:
  using State = std::optional<std::string>;

  // With `misses_allowed`, a miss is always a right answer and changes nothing
  // known (failover: a stand-in server, or a repaired one, may not hold the key).
  explicit Ledger(bool misses_allowed = false) : misses_allowed_(misses_allowed) {}

  void Wrote(const std::string& key, State state, bool certain) {
    Key& k = KeyOf(key);
    if (certain) {
      k.current = std::move(state);
    } else {
      k.pending.insert(std::move(state));
    }
  }
  // A read saw `state`: the key's value as last known, or a failed write's,
  // which has then landed. False when it is neither.
  bool Read(const std::string& key, const State& state) {
    Key& k = KeyOf(key);
    if (state == k.current || (!state && misses_allowed_)) return true;
    const auto landed = k.pending.find(state);
    if (landed == k.pending.end()) return false;
    k.pending.erase(landed);
    k.current = state;
    return true;
  }
  // The store refused an add: the key holds a value, as last known or landed.
  bool Present(const std::string& key) {
    const Key& k = KeyOf(key);
    return k.current.has_value() ||
           std::any_of(k.pending.begin(), k.pending.end(), [](const State& s) { return s; });
  }
  std::string Describe(const std::string& key) {
    const Key& k = KeyOf(key);
    auto text = [](const State& s) { return s ? s->substr(0, 24) : std::string("(none)"); };
    std::string out = text(k.current);
    for (const State& s : k.pending) out += " | or, from a failed write, " + text(s);
    return out;
  }

 private:
  struct Key {
    State current;                 // keys start absent (the servers are new)
    std::multiset<State> pending;  // failed writes not seen to land
  };
  Key& KeyOf(const std::string& key) { return keys_[key]; }
  bool misses_allowed_;
  std::map<std::string, Key> keys_;
};

struct StoreUnderTest {
  std::string name;
  std::string section;  // the config's store section, before `servers`
  std::function<Result<std::unique_ptr<ServerProcess>>()> start;
  std::string cache_lines = "";  // more of [cache]
  int retry_timeout_ms = 0;       // how long a server marked dead rests
  bool delimited = true;          // every reply ends with a delimiter (not Tokyo Tyrant's)
  Transport transport = Transport::kTcp;
};

std::unique_ptr<Cache> OpenThrough(const StoreUnderTest& store, const std::string& servers) {
  const std::string text = "[cache]\nbackend = " + store.name + "\n" + store.cache_lines +
                           store.section +
                           "servers = " + servers + "\nio_timeout_ms = " +
                           std::to_string(kIoTimeout.count()) + "\nretry_timeout_ms = " +
                           std::to_string(store.retry_timeout_ms) + "\n";
  auto config = Config::Parse(text, "random faults");
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

// One thread's calls on keys of its own, at random, with what each key may
// hold. What it finds wrong is kept, not asserted: Catch's assertions are for
// the test's own thread.
class Caller {
 public:
  Caller(Cache& cache, std::uint32_t seed, const std::string& prefix,
         bool misses_allowed = false)
      : cache_(cache), random_(seed), ledger_(misses_allowed) {
    for (int k = 0; k < 12; ++k) keys_.push_back(prefix + "key" + std::to_string(k));
  }

  void Call() {
    ++calls_;
    const unsigned what = random_() % 100;
    if (what < 35) {
      const std::string key = AnyKey();
      const Lookup<std::string> got = cache_.Get<std::string>(key);
      if (!Read(key, got)) ++failed_calls_;
    } else if (what < 60) {
      const std::string key = AnyKey();
      std::string value = ValueFor(key);
      const Status s = cache_.Set<std::string>(key, value);
      if (!s.ok()) ++failed_calls_;
      Note(key, "set " + Short(value) + " " + s.ToString());
      ledger_.Wrote(key, std::move(value), s.ok());
    } else if (what < 70) {
      std::vector<std::string> some;
      for (int i = 0; i < 4; ++i) some.push_back(AnyKey());
      const std::vector<Lookup<std::string>> got = cache_.GetMulti<std::string>(some);
      bool failed = got.size() != some.size();
      for (std::size_t i = 0; i < some.size() && i < got.size(); ++i) {
        failed = !Read(some[i], got[i]) || failed;
      }
      if (failed) ++failed_calls_;
    } else if (what < 80) {
      std::vector<std::pair<std::string, std::string>> entries;
      for (int i = 0; i < 3; ++i) {
        const std::string key = AnyKey();
        entries.emplace_back(key, ValueFor(key));
      }
      const std::vector<Status> stored = cache_.SetMulti<std::string>(entries);
      bool failed = stored.size() != entries.size();
      for (std::size_t i = 0; i < entries.size() && i < stored.size(); ++i) {
        failed = failed || !stored[i].ok();
        Note(entries[i].first, "set_multi " + Short(entries[i].second) + " " +
                                   stored[i].ToString());
        ledger_.Wrote(entries[i].first, entries[i].second, stored[i].ok());
      }
      if (failed) ++failed_calls_;
    } else if (what < 90) {
      const std::string key = AnyKey();
      const Status s = cache_.Remove(key);
      const bool certain = s.ok() || s.IsNotFound();
      if (!certain) ++failed_calls_;
      Note(key, "remove " + s.ToString());
      ledger_.Wrote(key, std::nullopt, certain);
    } else {
      const std::string key = AnyKey();
      std::string value = ValueFor(key);
      const Status s = cache_.Add<std::string>(key, value);
      Note(key, "add " + Short(value) + " " + s.ToString());
      if (s.IsNotStored() || s.IsExists()) {
        if (!ledger_.Present(key)) {
          wrong_.push_back("add of " + key + " refused, may hold: " + ledger_.Describe(key));
        }
      } else {
        if (!s.ok()) ++failed_calls_;
        ledger_.Wrote(key, std::move(value), s.ok());
      }
    }
  }

  int failed_calls() const { return failed_calls_; }
  int reads_checked() const { return reads_checked_; }
  const std::vector<std::string>& wrong() const { return wrong_; }
  // Calls use only `key` from now on; an empty one: all keys again.
  void Focus(const std::string& key) { focus_ = key; }

 private:
  std::string AnyKey() { return focus_.empty() ? keys_[random_() % keys_.size()] : focus_; }

  // A value that names its key and write: any mix-up reads as a value the key
  // never held. One in ten is large, so its replies come in many pieces.
  std::string ValueFor(const std::string& key) {
    const int serial = ++serial_;
    std::string value = key + "#" + std::to_string(serial) + "#";
    const std::size_t size = random_() % 10 == 0 ? 150 * 1024 : 8 + random_() % 200;
    while (value.size() < size) value += static_cast<char>('a' + (serial + value.size()) % 26);
    return value;
  }

  // False when the read failed; a hit or a miss must be what the key may hold.
  bool Read(const std::string& key, const Lookup<std::string>& got) {
    if (!got.hit() && !got.miss()) {
      Note(key, "read " + got.status().ToString());
      return false;
    }
    const Ledger::State seen = got.hit() ? Ledger::State(got.value()) : std::nullopt;
    const std::string may = ledger_.Describe(key);
    if (!ledger_.Read(key, seen)) {
      wrong_.push_back("key " + key + " read " + (seen ? seen->substr(0, 24) : "(none)") +
                       ", may hold: " + may + "; its last calls: " + History(key));
    }
    Note(key, "read " + Short(seen));
    ++reads_checked_;
    return true;
  }

  // The first bytes of a value ("key3#41#"), for the history.
  static std::string Short(const Ledger::State& state) {
    if (!state) return "(none)";
    const std::size_t end = state->find('#', state->find('#') + 1);
    return state->substr(0, end == std::string::npos ? 24 : end + 1);
  }
  // What calls did to `key` lately, so a wrong read shows how it came about.
  void Note(const std::string& key, std::string event) {
    std::vector<std::string>& events = history_[key];
    if (events.size() == 8) events.erase(events.begin());
    events.push_back("call " + std::to_string(calls_) + ": " + std::move(event));
  }
  std::string History(const std::string& key) {
    std::string out;
    for (const std::string& event : history_[key]) out += (out.empty() ? "" : ", ") + event;
    return out;
  }

  Cache& cache_;
  std::mt19937 random_;
  std::vector<std::string> keys_;
  std::string focus_;
  Ledger ledger_;
  int serial_ = 0;
  int failed_calls_ = 0;
  int reads_checked_ = 0;
  std::vector<std::string> wrong_;
  int calls_ = 0;
  std::map<std::string, std::vector<std::string>> history_;
};

// Stores 0 to 5 over TCP, 6 to 9 over TLS, 10 and 11 over Unix sockets.
StoreUnderTest StoreOf(int which) {
  auto memcached = [] { return StartMemcached(); };
  auto redis = [] { return StartRedis(); };
  const std::string tls = "tls = true\ntls_ca_file = " + net::fake_tls::Certificates().ca() + "\n";
  const std::string text = "[memcached]\nprotocol = text\n";
  const std::string meta = "[memcached]\nprotocol = meta\n";
  switch (which) {
    case 0: return {"memcached", text, memcached};
    case 1: return {"memcached", meta, memcached};
    case 2: return {"redis", "[redis]\n", redis};
    case 3: return {"tokyotyrant", "[tokyotyrant]\n", [] { return StartTokyoTyrant(); }, "", false};
    case 4: return {"redis", "[redis]\n", redis, "near_cache = on\n"};
    case 5: return {"memcached", "[memcached]\n", memcached, "near_cache = on\n"};
    case 6: return {"memcached", text + tls, memcached, "", 0, true, Transport::kTls};
    case 7: return {"memcached", meta + tls, memcached, "", 0, true, Transport::kTls};
    case 8: return {"redis", "[redis]\n" + tls, redis, "", 0, true, Transport::kTls};
    case 9:
      return {"redis", "[redis]\n" + tls, redis, "near_cache = on\n", 0, true, Transport::kTls};
    case 10: return {"memcached", meta, memcached, "", 0, true, Transport::kUnix};
    default: return {"redis", "[redis]\n", redis, "", 0, true, Transport::kUnix};
  }
}

// Calls a loaded machine may fail on its own (a stall past io_timeout). Far
// fewer than calls would fail if what arrives at idle connections cost any:
// with the idle check off, 48 more than the faults.
constexpr int kStallAllowance = 10;

// Two servers of `store`, each behind a front of its own, so batches span both.
struct Rig {
  Rig(const StoreUnderTest& store, std::uint32_t seed)
      : first(store.start()), second(store.start()) {
    INFO(first.status().ToString() << " " << second.status().ToString());
    REQUIRE((first.ok() && second.ok()));
    for (int i = 0; i < 2; ++i) {
      const int port = (i == 0 ? *first : *second)->port();
      fronts[i] = std::make_unique<FaultyFront>(port, seed + i, 40, store.delimited,
                                                store.transport);
    }
    cache = OpenThrough(store, fronts[0]->address() + "," + fronts[1]->address());
  }
  int disruptions() const { return fronts[0]->disruptions() + fronts[1]->disruptions(); }
  int harmless() const { return fronts[0]->harmless() + fronts[1]->harmless(); }

  Result<std::unique_ptr<ServerProcess>> first;
  Result<std::unique_ptr<ServerProcess>> second;
  std::array<std::unique_ptr<FaultyFront>, 2> fronts;
  std::unique_ptr<Cache> cache;
};

// Whether the master on `port` says it serves `slot` ("cluster nodes", its
// own line: fields from the ninth on are its slots, "low-high" or one).
bool ServesSlot(int port, int slot) {
  std::istringstream lines(RedisCluster::Cli(port, "cluster nodes"));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("myself") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 8; ++i) fields >> field;
    while (fields >> field) {
      if (field.starts_with("[")) continue;  // a slot being imported or migrated
      const std::size_t dash = field.find('-');
      const int low = std::stoi(field.substr(0, dash));
      const int high = dash == std::string::npos ? low : std::stoi(field.substr(dash + 1));
      if (slot >= low && slot <= high) return true;
    }
  }
  return false;
}

// Moves `key`'s slot to another master as a resharding tool does: the target
// imports, the source migrates, each of the slot's keys goes over (MIGRATE,
// straight to the target's own port), and every master is told the new owner;
// no client is. `between` runs with the slot half moved and with its keys
// moved (ASK redirections for them).
void MoveSlot(const RedisCluster& cluster, const std::string& key,
              const std::function<void()>& between) {
  const std::vector<int> masters = cluster.MasterPorts();
  REQUIRE(masters.size() >= 2);
  const int slot = std::stoi(RedisCluster::Cli(masters[0], "cluster keyslot " + key));
  const auto owner = std::find_if(masters.begin(), masters.end(),
                                  [&](int port) { return ServesSlot(port, slot); });
  REQUIRE(owner != masters.end());
  const int source = *owner;
  const int target = owner + 1 == masters.end() ? masters.front() : *(owner + 1);
  const std::string source_id = RedisCluster::Cli(source, "cluster myid");
  const std::string target_id = RedisCluster::Cli(target, "cluster myid");
  const std::string setslot = "cluster setslot " + std::to_string(slot);
  REQUIRE(RedisCluster::Cli(target, setslot + " importing " + source_id) == "OK");
  REQUIRE(RedisCluster::Cli(source, setslot + " migrating " + target_id) == "OK");
  between();
  std::istringstream keys(
      RedisCluster::Cli(source, "cluster getkeysinslot " + std::to_string(slot) + " 1000"));
  for (std::string moved; std::getline(keys, moved);) {
    if (moved.empty()) continue;
    REQUIRE(RedisCluster::Cli(source, "migrate 127.0.0.1 " + std::to_string(target) + " '" +
                                          moved + "' 0 5000") == "OK");
  }
  between();
  for (const int port : masters) {
    REQUIRE(RedisCluster::Cli(port, setslot + " node " + target_id) == "OK");
  }
}

}  // namespace

TEST_CASE("random faults between client and server never give a wrong value",
          "[faults][random]") {
  const StoreUnderTest store = StoreOf(GENERATE(range(0, 12)));
  INFO(store.name << " " << store.section << store.cache_lines);
  const std::uint32_t seed = 20261205;
  Rig rig(store, seed);
  Caller caller(*rig.cache, seed, "");
  constexpr int kCalls = 1500;
  for (int call = 0; call < kCalls; ++call) {
    // Between calls, so every connection is idle in the pool.
    for (const std::unique_ptr<FaultyFront>& front : rig.fronts) {
      if (call % 40 == 39) front->RepeatLastReplies();
      if (call % 97 == 96) front->CloseAll();
    }
    if (call % 40 == 39 || call % 97 == 96) std::this_thread::sleep_for(milliseconds(3));
    caller.Call();
  }
  INFO("faults that may fail a call " << rig.disruptions() << ", harmless " << rig.harmless()
                                      << ", calls failed " << caller.failed_calls());
  for (const std::string& wrong : caller.wrong()) FAIL_CHECK(wrong);
  // The faults happened, on both servers, and the reads were checked. (About
  // ten a server; a loaded machine reads replies in fewer pieces, so fewer.)
  CHECK(rig.fronts[0]->disruptions() >= 2);
  CHECK(rig.fronts[1]->disruptions() >= 2);
  CHECK(rig.disruptions() >= 10);
  CHECK(rig.harmless() >= 10);
  CHECK(caller.reads_checked() >= kCalls / 3);
  // Only the faults that reach a call fail it (and stalls of the machine): what
  // arrives at an idle connection, and idle connections closed, cost none.
  CHECK(caller.failed_calls() <= rig.disruptions() + kStallAllowance);
}

// Two threads share the Cache, each on keys of its own, so connections pass
// between them (with max_connections = 1, one per server, waited for). The
// faults are the fronts' own only: a fault between one thread's calls could
// land in the other's exchange, where no reader can tell it (docs/config.md).
TEST_CASE("random faults under two threads never give a wrong value", "[faults][random]") {
  // Every store over TCP; memcached meta and Redis over TLS, Redis over a Unix socket.
  StoreUnderTest store = StoreOf(GENERATE(0, 1, 2, 3, 7, 8, 11));
  store.section += GENERATE(as<std::string>(), "", "max_connections = 1\n");
  INFO(store.name << " " << store.section);
  const std::uint32_t seed = 20261206;
  Rig rig(store, seed);
  Caller a(*rig.cache, seed, "a:");
  Caller b(*rig.cache, seed + 7, "b:");
  constexpr int kCalls = 750;
  std::thread other([&] {
    for (int call = 0; call < kCalls; ++call) b.Call();
  });
  for (int call = 0; call < kCalls; ++call) a.Call();
  other.join();
  const int failed = a.failed_calls() + b.failed_calls();
  INFO("faults that may fail a call " << rig.disruptions() << ", calls failed " << failed);
  for (const std::string& wrong : a.wrong()) FAIL_CHECK(wrong);
  for (const std::string& wrong : b.wrong()) FAIL_CHECK(wrong);
  CHECK(rig.disruptions() >= 5);
  CHECK(a.reads_checked() + b.reads_checked() >= kCalls * 2 / 3);
  CHECK(failed <= rig.disruptions() + kStallAllowance);
}

// A Redis Cluster of three masters, each behind a front. Every node announces
// its front's port (cluster-announce-port), so the slot map and every
// redirection name the fronts: cachet reaches the nodes only through them,
// topology queries included. Twice during the run a key's slot moves to
// another master under the calls (MoveSlot), so they meet ASK and MOVED
// redirections, faults and all; with the near cache too, whose tracking links
// cross the fronts and whose entries a redirection drops.
TEST_CASE("random faults under a Redis Cluster whose slots move never give a wrong value",
          "[faults][random][cluster]") {
  StoreUnderTest store{"redis", "[redis]\nmode = cluster\n", nullptr};  // started below
  store.cache_lines = GENERATE(as<std::string>(), "", "near_cache = on\n");
  INFO(store.cache_lines);
  auto started = RedisCluster::Start();  // three masters
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  const RedisCluster& cluster = **started;
  const std::uint32_t seed = 20261208;
  std::vector<std::unique_ptr<FaultyFront>> fronts;
  std::string seeds;
  for (const std::unique_ptr<ServerProcess>& node : cluster.nodes()) {
    fronts.push_back(std::make_unique<FaultyFront>(node->port(), seed + node->port(), 0, true));
    const std::string announce = std::to_string(fronts.back()->port());
    REQUIRE(RedisCluster::Cli(node->port(), "config set cluster-announce-port " + announce) ==
            "OK");
    seeds += (seeds.empty() ? "" : ",") + fronts.back()->address();
  }
  // Every node names every node by its front before the client asks.
  REQUIRE(WaitUntil(
      [&] {
        for (const std::unique_ptr<ServerProcess>& node : cluster.nodes()) {
          const std::string nodes = RedisCluster::Cli(node->port(), "cluster nodes");
          for (const std::unique_ptr<FaultyFront>& front : fronts) {
            if (nodes.find(":" + std::to_string(front->port()) + "@") == std::string::npos) {
              return false;
            }
          }
        }
        return true;
      },
      std::chrono::seconds(30), milliseconds(100)));
  std::unique_ptr<Cache> cache = OpenThrough(store, seeds);
  for (const std::unique_ptr<FaultyFront>& front : fronts) front->SetFaultRate(40);

  Caller caller(*cache, seed, "");
  int call = 0;
  auto calls = [&](int count) {
    for (int i = 0; i < count; ++i, ++call) {
      for (const std::unique_ptr<FaultyFront>& front : fronts) {
        if (call % 40 == 39) front->RepeatLastReplies();
        if (call % 97 == 96) front->CloseAll();
      }
      if (call % 40 == 39 || call % 97 == 96) std::this_thread::sleep_for(milliseconds(3));
      caller.Call();
    }
  };
  // While a slot moves: calls on its key with the faults off, none of which
  // may fail (a broken redirection fails them), then calls on every key.
  auto while_moving = [&](const std::string& key) {
    for (const std::unique_ptr<FaultyFront>& front : fronts) front->SetFaultRate(0);
    caller.Focus(key);
    const int failed = caller.failed_calls();
    calls(30);
    CHECK(caller.failed_calls() - failed <= 2);  // a stall of a loaded machine
    caller.Focus("");
    for (const std::unique_ptr<FaultyFront>& front : fronts) front->SetFaultRate(40);
    calls(100);
  };
  calls(400);
  MoveSlot(cluster, "key0", [&] { while_moving("key0"); });
  calls(300);
  MoveSlot(cluster, "key5", [&] { while_moving("key5"); });
  calls(400);
  int disruptions = 0;
  for (const std::unique_ptr<FaultyFront>& front : fronts) disruptions += front->disruptions();
  INFO("faults that may fail a call " << disruptions << ", calls failed "
                                      << caller.failed_calls());
  for (const std::string& wrong : caller.wrong()) FAIL_CHECK(wrong);
  CHECK(disruptions >= 10);
  CHECK(caller.reads_checked() >= call / 3);
  CHECK(caller.failed_calls() <= disruptions + kStallAllowance);
}

// memcached with failover: faults mark servers dead (one failure is enough),
// their keys go to the other server while they rest, and a server that comes
// back is repaired before it serves again. docs/config.md: a read returns the
// last value this process wrote for its key, or a miss, never an older copy.
TEST_CASE("random faults under memcached failover never give an older copy",
          "[faults][random][failover]") {
  StoreUnderTest store = StoreOf(GENERATE(0, 1));
  store.section += "failover = true\nfailure_limit = 1\n";
  store.retry_timeout_ms = 100;
  INFO(store.section);
  const std::uint32_t seed = 20261207;
  Rig rig(store, seed);
  Caller caller(*rig.cache, seed, "", /*misses_allowed=*/true);
  constexpr int kCalls = 1500;
  // Paced, so a server's rest spans tens of calls, not hundreds (with both
  // resting, calls fail as unavailable at once).
  for (int call = 0; call < kCalls; ++call) {
    caller.Call();
    std::this_thread::sleep_for(milliseconds(1));
  }
  INFO("faults that may fail a call " << rig.disruptions() << ", calls failed "
                                      << caller.failed_calls());
  for (const std::string& wrong : caller.wrong()) FAIL_CHECK(wrong);
  CHECK(rig.disruptions() >= 5);
  CHECK(caller.reads_checked() >= kCalls / 3);
  // Servers were marked dead and came back: failover and repair both ran.
  std::uint64_t marked_dead = 0;
  for (const ServerHealth& server : rig.cache->Health()) marked_dead += server.marked_dead;
  INFO("marked dead " << marked_dead << " times");
  CHECK(marked_dead >= 5);
}

}  // namespace cachet::test
