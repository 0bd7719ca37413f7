// Connection, ServerAddress, ReadBuffer, ServerPool and FanOut against real and
// deliberately absent servers on loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "cachet/net/connection.h"
#include "cachet/net/fan_out.h"
#include "cachet/net/lone_call.h"
#include "cachet/net/server_pool.h"
#include "launchers/memcached_server.h"
#include "support/allocation_hooks.h"
#include "support/line_reader.h"
#include "launchers/server_process.h"

namespace cachet::net {
namespace {

using std::chrono::milliseconds;

ServerAddress Loopback(int port) { return {"127.0.0.1", static_cast<std::uint16_t>(port), 1}; }

// A pool of one server, a throwaway memcached (.ci/setup installs it: missing,
// the test fails).
struct PoolOnMemcached {
  explicit PoolOnMemcached(ServerPoolOptions options = {}) {
    REQUIRE(test::HaveMemcached());
    auto started = test::StartMemcached();
    REQUIRE(started.ok());
    server = std::move(started).value();
    std::vector<ServerAddress> servers = {Loopback(server->port())};
    pool = std::make_unique<ServerPool>(
        servers, Distribution::Create(DistributionKind::kModula, servers), options);
  }
  std::unique_ptr<test::ServerProcess> server;
  std::unique_ptr<ServerPool> pool;
};

using test::LineReader;

Status RoundTrip(Connection& c, std::string_view request, std::string* line) {
  Exchange e;
  e.connection = &c;
  e.request.push_back({const_cast<char*>(request.data()), request.size()});
  LineReader reader;
  e.reader = &reader;
  RunExchanges({&e, 1}, c.CallDeadline());
  *line = reader.line;
  return e.status;
}

// A loopback port whose connects never complete: a listener with a backlog of 0
// whose one queue slot is taken by a connection it never accepts, so the kernel
// drops every further SYN. Closes its sockets when destroyed.
class BlackHole {
 public:
  BlackHole() {
    listener_ = test::ListenOnLoopback(0, &port_);
    REQUIRE(listener_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port_));
    // The filler's handshake completes (the queue has one slot); wait for it, bounded.
    filler_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    (void)::connect(filler_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    pollfd pfd{filler_, POLLOUT, 0};
    REQUIRE(::poll(&pfd, 1, 2000) == 1);
  }
  ~BlackHole() {
    ::close(filler_);
    ::close(listener_);
  }
  int port() const { return port_; }

 private:
  int listener_ = -1;
  int filler_ = -1;
  int port_ = 0;
};

}  // namespace

TEST_CASE("server addresses parse with ports and weights", "[endpoint]") {
  auto a = ParseServerAddress(" 10.0.0.1:11212:3 ", 11211);
  REQUIRE(a.ok());
  CHECK(a->host == "10.0.0.1");
  CHECK(a->port == 11212);
  CHECK(a->weight == 3);
  CHECK(ParseServerAddress("cache", 11211)->port == 11211);
  CHECK(ParseServerAddress("[::1]:5", 11211)->host == "[::1]");
  CHECK(ParseServerAddress("h:0", 1).status().IsConfigError());
  CHECK(ParseServerAddress("h:70000", 1).status().IsConfigError());
  CHECK(ParseServerAddress("h:1:0", 1).status().IsConfigError());
  CHECK(ParseServerAddress("h:1:x", 1).status().IsConfigError());
  CHECK(ParseServerAddress(":1", 1).status().IsConfigError());
  CHECK(ParseServerAddress("h:", 1).status().IsConfigError());  // a port left out
  CHECK(ParseServerAddress("[::1]:", 1).status().IsConfigError());
  // Weights are bounded: they size the hash rings (a 32-bit total, weight x 160 points).
  CHECK(ParseServerAddress("h:1:10000", 1)->weight == 10000);
  for (const char* heavy : {"h:1:10001", "h:1:4294967295", "unix:/tmp/s.sock:10001"}) {
    INFO(heavy);
    const auto refused = ParseServerAddress(heavy, 1);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().IsConfigError());
    CHECK(std::string(refused.status().message()).find("from 1 to 10000") != std::string::npos);
  }
  std::vector<std::string> entries = {"a:1, b:2:2", "", "c"};
  auto list = ParseServerList(entries, 11211);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[1].weight == 2);
  CHECK((*list)[2].HostPort() == "c:11211");
  CHECK(ParseServerList(std::vector<std::string>{" , "}, 1).status().IsConfigError());
}

TEST_CASE("unix: addresses keep their text as the host, with an optional weight", "[endpoint]") {
  auto a = ParseServerAddress("unix:/run/memcached/memcached.sock", 11211);
  REQUIRE(a.ok());
  CHECK(a->IsUnix());
  CHECK(a->host == "unix:/run/memcached/memcached.sock");
  CHECK(a->UnixPath() == "/run/memcached/memcached.sock");
  CHECK(a->port == 0);
  CHECK(a->weight == 1);
  CHECK(a->HostPort() == "unix:/run/memcached/memcached.sock");
  auto weighted = ParseServerAddress(" unix:/tmp/a.sock:3 ", 11211);
  REQUIRE(weighted.ok());
  CHECK(weighted->UnixPath() == "/tmp/a.sock");
  CHECK(weighted->weight == 3);
  CHECK(ParseServerAddress("unix:/tmp/a.sock:0", 1).status().IsConfigError());
  CHECK(ParseServerAddress("unix:", 1).status().IsConfigError());
  CHECK(ParseServerAddress("unix:/" + std::string(120, 'x'), 1).status().IsConfigError());
  CHECK_FALSE(ParseServerAddress("unixhost:1", 1)->IsUnix());
  // Several unix: servers are a list like any other, hashed on their text.
  std::vector<std::string> entries = {"unix:/tmp/a.sock,unix:/tmp/b.sock:2, 10.0.0.1:5"};
  auto list = ParseServerList(entries, 11211);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[1].weight == 2);
  CHECK((*list)[2].HostPort() == "10.0.0.1:5");
}

TEST_CASE("a read buffer compacts and grows", "[read_buffer]") {
  ReadBuffer b;
  char* w = b.PrepareWrite(4);
  std::memcpy(w, "abcd", 4);
  b.Commit(4);
  b.Consume(1);
  CHECK(b.data() == "bcd");
  w = b.PrepareWrite(b.writable() + 10);
  std::memcpy(w, "e", 1);
  b.Commit(1);
  CHECK(b.data() == "bcde");
  b.Consume(4);
  CHECK(b.empty());
}

TEST_CASE("connecting to a closed port is unavailable", "[connection]") {
  const test::RefusingPort refusing;
  const int port = refusing.port();
  Connection c(Loopback(port), {});
  Status s = c.EnsureConnected();
  CHECK(s.IsUnavailable());
  CHECK(s.message().find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK_FALSE(c.connected());
}

TEST_CASE("unix: a full accept queue waits out connect_timeout, as a dropped SYN does",
          "[connection]") {
  // A listener with a backlog of 0 that never accepts; a first client fills its queue.
  const std::string path =
      "/tmp/cachet-backlog-" + std::to_string(::getpid()) + ".sock";
  ::unlink(path.c_str());
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::strncpy(un.sun_path, path.c_str(), sizeof(un.sun_path) - 1);
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&un), sizeof(un)) == 0);
  REQUIRE(::listen(listener, 0) == 0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {  // the kernel keeps backlog + 1; a few more make sure
    const int filler = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (::connect(filler, reinterpret_cast<sockaddr*>(&un), sizeof(un)) == 0) {
      fillers.push_back(filler);
    } else {
      ::close(filler);
    }
  }
  auto address = ParseServerAddress("unix:" + path, 0);
  REQUIRE(address.ok());
  Connection c(*address, {milliseconds(150), milliseconds(1000)});
  const Clock::time_point start = Clock::now();
  const Status s = c.EnsureConnected();
  const auto took = Clock::now() - start;
  INFO(s.ToString());
  CHECK(s.IsTimeout());
  CHECK(s.message().find("connect timed out") != std::string::npos);
  CHECK(took >= milliseconds(100));
  CHECK(took < milliseconds(1000));
  CHECK_FALSE(c.connected());
  for (int filler : fillers) ::close(filler);
  ::close(listener);
  ::unlink(path.c_str());
}

TEST_CASE("a connection talks to memcached and survives a restart", "[connection]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = test::StartMemcached();
  REQUIRE(server.ok());
  Connection c(Loopback((*server)->port()), {milliseconds(500), milliseconds(1000)});
  std::string line;
  REQUIRE(RoundTrip(c, "version\r\n", &line).ok());
  CHECK(line.rfind("VERSION ", 0) == 0);

  REQUIRE((*server)->Restart().ok());
  // The old socket is dead: the first exchange fails and drops it...
  Status broken = RoundTrip(c, "version\r\n", &line);
  if (!broken.ok()) {
    CHECK(broken.IsIoError());
    CHECK_FALSE(c.connected());
  }
  // ...and the next one reconnects without any help.
  REQUIRE(RoundTrip(c, "version\r\n", &line).ok());
  CHECK(line.rfind("VERSION ", 0) == 0);
}

TEST_CASE("a stalled server times out within the I/O timeout", "[connection]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = test::StartMemcached();
  REQUIRE(server.ok());
  Connection c(Loopback((*server)->port()), {milliseconds(500), milliseconds(200)});
  REQUIRE(c.EnsureConnected().ok());
  REQUIRE((*server)->Pause().ok());
  std::string line;
  Status s = RoundTrip(c, "version\r\n", &line);
  CHECK(s.IsTimeout());
  CHECK_FALSE(c.connected());
  REQUIRE((*server)->Resume().ok());
}

TEST_CASE("a forked child does not reuse its parent's socket", "[connection]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = test::StartMemcached();
  REQUIRE(server.ok());
  Connection c(Loopback((*server)->port()), {});
  REQUIRE(c.EnsureConnected().ok());
  int parent_fd = c.fd();
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Exit code 0 only if the child sees the connection as not its own and
    // gets a fresh socket of its own.
    bool fresh = !c.connected() && c.EnsureConnected().ok() && c.connected();
    _exit(fresh ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's connection is untouched and still works.
  CHECK(c.connected());
  CHECK(c.fd() == parent_fd);
  std::string line;
  CHECK(RoundTrip(c, "version\r\n", &line).ok());
}

TEST_CASE("a pool marks a server dead after failure_limit failures", "[server_pool]") {
  std::vector<ServerAddress> servers = {Loopback(1), Loopback(2)};
  ServerPoolOptions options;
  options.failure_limit = 2;
  options.retry_timeout = milliseconds(60000);
  auto dist = Distribution::Create(DistributionKind::kModula, servers);
  std::size_t home = dist->ServerFor("k");
  ServerPool pool(servers, std::move(dist), options);
  CHECK(*pool.Route("k") == home);
  pool.ReportFailure(home);
  CHECK(pool.Available(home));
  pool.ReportFailure(home);
  CHECK_FALSE(pool.Available(home));
  Result<std::size_t> routed = pool.Route("k");
  CHECK(routed.status().IsUnavailable());
  CHECK(routed.status().message().find("marked dead") != std::string_view::npos);
  pool.ReportSuccess(home);
  CHECK(pool.Available(home));
}

TEST_CASE("with failover a dead server's keys move to a live one", "[server_pool]") {
  std::vector<ServerAddress> servers = {Loopback(1), Loopback(2), Loopback(3)};
  ServerPoolOptions options;
  options.failure_limit = 1;
  options.failover = true;
  options.retry_timeout = milliseconds(60000);
  ServerPool pool(servers, Distribution::Create(DistributionKind::kKetama, servers), options);
  std::size_t home = *pool.Route("k");
  pool.ReportFailure(home);
  Result<std::size_t> moved = pool.Route("k");
  REQUIRE(moved.ok());
  CHECK(*moved != home);
}

TEST_CASE("a dead server is retried after retry_timeout", "[server_pool]") {
  std::vector<ServerAddress> servers = {Loopback(1)};
  ServerPoolOptions options;
  options.failure_limit = 1;
  options.retry_timeout = milliseconds(0);
  ServerPool pool(servers, Distribution::Create(DistributionKind::kModula, servers), options);
  pool.ReportFailure(0);
  CHECK(pool.Available(0));
}

TEST_CASE("pooled connections are reused", "[server_pool]") {
  PoolOnMemcached fixture;
  ServerPool& pool = *fixture.pool;
  int first_fd = -1;
  {
    ServerPool::Lease lease = pool.Acquire(0);
    REQUIRE(lease->EnsureConnected().ok());
    first_fd = lease->fd();
  }
  ServerPool::Lease again = pool.Acquire(0);
  CHECK(again->connected());
  CHECK(again->fd() == first_fd);
}

TEST_CASE("a thread returning two connections keeps both: one in its slot, one idle",
          "[server_pool]") {
  PoolOnMemcached fixture;
  ServerPool& pool = *fixture.pool;
  int fds[2] = {-1, -1};
  {
    ServerPool::Lease first = pool.Acquire(0);
    ServerPool::Lease second = pool.Acquire(0);
    REQUIRE(first->EnsureConnected().ok());
    REQUIRE(second->EnsureConnected().ok());
    fds[0] = first->fd();
    fds[1] = second->fd();
  }  // the second returns to the empty slot, the first finds it taken
  ServerPool::Lease again = pool.Acquire(0);
  ServerPool::Lease again_too = pool.Acquire(0);
  CHECK(again->connected());
  CHECK(again_too->connected());
  CHECK(again->reused());
  CHECK(again_too->reused());
  CHECK(again->fd() != again_too->fd());
  CHECK((again->fd() == fds[0] || again->fd() == fds[1]));
  CHECK((again_too->fd() == fds[0] || again_too->fd() == fds[1]));
}

TEST_CASE("with pool_size 0 a returned connection is closed, never lent again", "[server_pool]") {
  ServerPoolOptions options;
  options.pool_size = 0;
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  {
    ServerPool::Lease lease = pool.Acquire(0);
    REQUIRE(lease->EnsureConnected().ok());
  }
  std::vector<ServerHealth> health;
  pool.AppendHealth(&health);
  REQUIRE(health.size() == 1);
  CHECK(health[0].connections == 0);
  ServerPool::Lease again = pool.Acquire(0);
  CHECK_FALSE(again->connected());
}

// Threads that act in a set order: a thread's step waits until every earlier
// step is done. Counts waits that ran out (Catch2's macros are for the main thread).
class Steps {
 public:
  void Await(int mine) {
    for (int i = 0; i < 5000 && step_.load() != mine; ++i) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    if (step_.load() != mine) ++late_;
  }
  void Done() { ++step_; }
  int late() const { return late_.load(); }

 private:
  std::atomic<int> step_{0};
  std::atomic<int> late_{0};
};

TEST_CASE("each thread gets its own connection back, not the one another thread returned last",
          "[server_pool]") {
  PoolOnMemcached fixture;
  ServerPool& pool = *fixture.pool;
  // Two threads take turns, one step each: A borrows, B borrows, A returns, B
  // returns, B borrows again, A borrows again. With one slot for both, B's
  // second borrow would take the connection A returned.
  Steps steps;
  std::atomic<int> failed{0};
  int first_fd[2] = {-1, -1};
  int second_fd[2] = {-1, -1};
  auto thread_body = [&](int t, int borrow, int give_back, int borrow_again) {
    {
      steps.Await(borrow);
      ServerPool::Lease lease = pool.Acquire(0);
      if (!lease->EnsureConnected().ok()) ++failed;
      first_fd[t] = lease->fd();
      steps.Done();
      steps.Await(give_back);
    }
    steps.Done();
    steps.Await(borrow_again);
    ServerPool::Lease lease = pool.Acquire(0);
    second_fd[t] = lease->fd();
    steps.Done();
  };
  std::thread a(thread_body, 0, 0, 2, 5);
  std::thread b(thread_body, 1, 1, 3, 4);
  a.join();
  b.join();
  REQUIRE(failed.load() == 0);
  REQUIRE(steps.late() == 0);
  CHECK(first_fd[0] != first_fd[1]);
  CHECK(second_fd[0] == first_fd[0]);
  CHECK(second_fd[1] == first_fd[1]);
}

TEST_CASE("with the default pool_size 16 threads each get their own connection back",
          "[server_pool]") {
  PoolOnMemcached fixture;
  ServerPool& pool = *fixture.pool;
  // The 16 borrow one after another and hold theirs together, return them one
  // after another, then borrow again in the same order. Threads that shared a
  // spare slot would find the connection of the one that returned after them
  // (with 8 slots, thread 0 gets thread 8's).
  constexpr int kThreads = 16;
  Steps steps;
  std::atomic<int> failed{0};
  std::vector<int> first_fd(kThreads, -1);
  std::vector<int> second_fd(kThreads, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      {
        steps.Await(t);
        ServerPool::Lease lease = pool.Acquire(0);
        if (!lease->EnsureConnected().ok()) ++failed;
        first_fd[t] = lease->fd();
        steps.Done();
        steps.Await(kThreads + t);
      }
      steps.Done();
      steps.Await(2 * kThreads + t);
      ServerPool::Lease lease = pool.Acquire(0);
      second_fd[t] = lease->fd();  // -1: a new connection, not yet connected
      steps.Done();
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(failed.load() == 0);
  REQUIRE(steps.late() == 0);
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(first_fd[t] >= 0);
    CHECK(second_fd[t] == first_fd[t]);
  }
}

TEST_CASE("many threads returning connections keep about pool_size of them idle", "[server_pool]") {
  ServerPoolOptions options;
  options.pool_size = 2;  // two spare slots
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  constexpr int kThreads = 8;
  std::atomic<int> holding{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ServerPool::Lease lease = pool.Acquire(0);
      if (!lease->EnsureConnected().ok()) ++failed;
      ++holding;
      for (int i = 0; i < 5000 && holding.load() < kThreads; ++i) {
        std::this_thread::sleep_for(milliseconds(1));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(failed.load() == 0);
  std::vector<ServerHealth> health;
  pool.AppendHealth(&health);
  // pool_size, plus at most one more per other slot filled at the moment of a count.
  CHECK(health.at(0).connections <= 3);
  // The next return that finds its slot taken settles the count at pool_size.
  {
    ServerPool::Lease a = pool.Acquire(0);
    ServerPool::Lease b = pool.Acquire(0);
    ServerPool::Lease c = pool.Acquire(0);
    REQUIRE(a->EnsureConnected().ok());
    REQUIRE(b->EnsureConnected().ok());
    REQUIRE(c->EnsureConnected().ok());
  }
  health.clear();
  pool.AppendHealth(&health);
  CHECK(health.at(0).connections == 2);
}

TEST_CASE("max_connections bounds a server's connections, and a waiter gets one back",
          "[server_pool]") {
  ServerPoolOptions options;
  options.pool_size = 1;
  options.max_connections = 2;
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  auto first = std::make_unique<ServerPool::Lease>(pool.Acquire(0));
  ServerPool::Lease second = pool.Acquire(0);
  REQUIRE((*first)->EnsureConnected().ok());
  REQUIRE(second->EnsureConnected().ok());
  const int first_fd = (*first)->fd();
  auto health = [&pool] {
    std::vector<ServerHealth> out;
    pool.AppendHealth(&out);
    return out.at(0);
  };
  CHECK(health().connections == 2);

  SECTION("a third waits until its deadline, then fails as a timeout that is not the server's") {
    const Clock::time_point start = Clock::now();
    ServerPool::Lease third =
        pool.Acquire(0, ServerPool::Use::kReadsReplies, start + milliseconds(150));
    CHECK(Clock::now() - start >= milliseconds(150));
    CHECK(third->refused());
    const Status refused = third->EnsureConnected();
    CHECK(refused.IsTimeout());
    CHECK(refused.message().find("max_connections") != std::string::npos);
    pool.Report(0, third.connection(), refused);
    const ServerHealth h = health();
    CHECK(h.connections == 2);  // the stand-in is not a connection
    CHECK(h.pool_timeouts == 1);
    CHECK(h.errors == 0);
    CHECK(h.consecutive_failures == 0);
    CHECK(pool.Available(0));
  }
  SECTION("a third gets the connection another thread gives back") {
    std::thread giver([&first] {
      std::this_thread::sleep_for(milliseconds(100));
      first.reset();
    });
    ServerPool::Lease third =
        pool.Acquire(0, ServerPool::Use::kReadsReplies, Clock::now() + milliseconds(5000));
    giver.join();
    CHECK_FALSE(third->refused());
    CHECK(third->connected());
    CHECK(third->fd() == first_fd);
    CHECK(health().connections == 2);
    CHECK(health().pool_timeouts == 0);
  }
  SECTION("a connection dropped after an error frees its place for a new one") {
    std::thread giver([&first] {
      std::this_thread::sleep_for(milliseconds(100));
      (*first)->Close();
      first.reset();
    });
    ServerPool::Lease third =
        pool.Acquire(0, ServerPool::Use::kReadsReplies, Clock::now() + milliseconds(5000));
    giver.join();
    CHECK_FALSE(third->refused());
    CHECK(third->EnsureConnected().ok());
    CHECK(health().connections == 2);
  }
}

TEST_CASE("a connection that could not be made for want of memory gives its place back",
          "[server_pool]") {
  ServerPoolOptions options;
  options.max_connections = 1;
  // Nothing is connected: a lease's connection connects on first use.
  const std::vector<ServerAddress> servers = {Loopback(1)};
  ServerPool pool(servers, Distribution::Create(DistributionKind::kModula, servers), options);
  test::FailNextAllocationOf(sizeof(Connection));
  CHECK_THROWS_AS(pool.Acquire(0), std::bad_alloc);
  test::FailNextAllocationOf(0);
  CHECK_NOTHROW(delete[] new char[0]);  // disarmed: not a failure of 0-byte allocations
  // The one place under the bound is free again: no wait, no refusing stand-in.
  ServerPool::Lease lease =
      pool.Acquire(0, ServerPool::Use::kReadsReplies, Clock::now() + milliseconds(100));
  CHECK_FALSE(lease->refused());
  CHECK_FALSE(lease.waited());
}

TEST_CASE("a connection given back goes to the thread waiting for it, not back to its giver",
          "[server_pool]") {
  // Threads waiting under max_connections are served in turn: the giver, asking
  // again at once, waits behind them instead of taking its connection back
  // from its own slot while they wait on until their deadline.
  ServerPoolOptions options;
  options.pool_size = 1;
  options.max_connections = 1;
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  // Bounded waits for the pool's count of waiting threads to reach `count`.
  auto until_waiting = [&pool](std::size_t count) {
    for (int i = 0; i < 5000 && pool.Waiting(0) != count; ++i) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    return pool.Waiting(0) == count;
  };
  auto held = std::make_unique<ServerPool::Lease>(pool.Acquire(0));
  REQUIRE((*held)->EnsureConnected().ok());
  std::atomic<bool> served{false};
  std::atomic<bool> giver_queued{false};
  std::thread waiter([&] {
    ServerPool::Lease lease =
        pool.Acquire(0, ServerPool::Use::kReadsReplies, Clock::now() + milliseconds(1000));
    served = !lease->refused();
    giver_queued = until_waiting(1);  // holds it until the giver waits behind
  });
  REQUIRE(until_waiting(1));  // the other thread is in line
  held.reset();
  ServerPool::Lease again =
      pool.Acquire(0, ServerPool::Use::kReadsReplies, Clock::now() + milliseconds(5000));
  waiter.join();
  CHECK(served.load());
  CHECK(giver_queued.load());
  CHECK(again.waited());
  CHECK_FALSE(again->refused());
}

TEST_CASE("a call left too little time by its wait for a connection times out on no server's "
          "account", "[server_pool]") {
  ServerPoolOptions options;
  options.pool_size = 1;
  options.max_connections = 1;
  options.connection.io_timeout = milliseconds(200);
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  auto held = std::make_unique<ServerPool::Lease>(pool.Acquire(0));
  REQUIRE((*held)->EnsureConnected().ok());
  REQUIRE(fixture.server->Pause().ok());  // whoever asks next gets no answer
  // The holder gives its connection back 50 ms before the waiter's deadline.
  std::thread giver([&held] {
    std::this_thread::sleep_for(milliseconds(250));
    held.reset();
  });
  const Clock::time_point start = Clock::now();
  const std::string request = "version\r\n";
  const Status s = CallServer(
      pool, 0, ServerPool::Use::kReadsReplies, start, start + milliseconds(300), nullptr,
      [&](Connection& connection, Clock::time_point began) {
        iovec piece{const_cast<char*>(request.data()), request.size()};
        LineReader reader;
        return RunLoneExchange(connection, &piece, 1, reader, began, start + milliseconds(300));
      });
  giver.join();
  REQUIRE(fixture.server->Resume().ok());
  INFO(s.ToString());
  CHECK(s.IsTimeout());
  std::vector<ServerHealth> health;
  pool.AppendHealth(&health);
  CHECK(health.at(0).consecutive_failures == 0);
  CHECK(pool.Available(0));
}

TEST_CASE("a call that did not wait for a connection counts its timeout, whatever max_connections",
          "[server_pool]") {
  // A request timeout shorter than io_timeout: every call is short of time,
  // but only a wait for a connection excuses its timeout.
  ServerPoolOptions options;
  options.max_connections = 4;
  options.connection.io_timeout = milliseconds(1000);
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  REQUIRE(fixture.server->Pause().ok());
  const std::string request = "version\r\n";
  const Clock::time_point start = Clock::now();
  const Deadline deadline = start + milliseconds(300);
  const Status s = CallServer(pool, 0, ServerPool::Use::kReadsReplies, start, deadline, nullptr,
                              [&](Connection& connection, Clock::time_point began) {
                                iovec piece{const_cast<char*>(request.data()), request.size()};
                                LineReader reader;
                                return RunLoneExchange(connection, &piece, 1, reader, began,
                                                       deadline);
                              });
  REQUIRE(fixture.server->Resume().ok());
  INFO(s.ToString());
  CHECK(s.IsTimeout());
  std::vector<ServerHealth> health;
  pool.AppendHealth(&health);
  CHECK(health.at(0).consecutive_failures == 1);
  CHECK(health.at(0).timeouts == 1);
}

TEST_CASE("many threads under max_connections never hold more than the bound", "[server_pool]") {
  ServerPoolOptions options;
  options.pool_size = 1;
  options.max_connections = 3;
  PoolOnMemcached fixture(options);
  ServerPool& pool = *fixture.pool;
  std::atomic<int> lent{0};
  std::atomic<int> most{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        ServerPool::Lease lease =
            pool.Acquire(0, ServerPool::Use::kReadsReplies, Clock::now() + milliseconds(10000));
        if (lease->refused()) {
          ++refused;
          continue;
        }
        const int now = ++lent;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        if (!lease->EnsureConnected().ok()) lease->Close();
        std::this_thread::yield();
        --lent;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(most.load() <= 3);
  CHECK(most.load() >= 1);
  CHECK(refused.load() == 0);
  std::vector<ServerHealth> health;
  pool.AppendHealth(&health);
  CHECK(health.at(0).connections <= 3);
}

TEST_CASE("a pooled connection that heard anything while idle is not lent again", "[server_pool]") {
  int port = 0;
  const int listener = test::ListenOnLoopback(4, &port);
  REQUIRE(listener >= 0);
  std::vector<ServerAddress> servers = {Loopback(port)};
  ServerPool pool(servers, Distribution::Create(DistributionKind::kModula, servers), {});
  // Connects a lease, returns it to the pool, and hands back the server's end.
  auto connect_one = [&] {
    {
      ServerPool::Lease lease = pool.Acquire(0);
      REQUIRE(lease->EnsureConnected().ok());
      CHECK_FALSE(lease->reused());
    }
    const int accepted = ::accept(listener, nullptr, nullptr);
    REQUIRE(accepted >= 0);
    return accepted;
  };
  const int quiet = connect_one();
  {
    ServerPool::Lease lease = pool.Acquire(0);
    CHECK(lease->connected());
    CHECK(lease->reused());
  }
  // Bytes nobody asked for: the connection is closed before it is lent.
  REQUIRE(::send(quiet, "junk", 4, MSG_NOSIGNAL) == 4);
  std::this_thread::sleep_for(milliseconds(50));
  {
    ServerPool::Lease lease = pool.Acquire(0);
    CHECK_FALSE(lease->connected());
  }
  ::close(quiet);
  // The server's close (an idle timeout, a restart): likewise.
  const int closing = connect_one();
  ::close(closing);
  std::this_thread::sleep_for(milliseconds(50));
  {
    ServerPool::Lease lease = pool.Acquire(0);
    CHECK_FALSE(lease->connected());
  }
  ::close(listener);
}

TEST_CASE("a write-only use skips the idle check only on a busy connection", "[server_pool]") {
  int port = 0;
  const int listener = test::ListenOnLoopback(4, &port);
  REQUIRE(listener >= 0);
  Connection c(Loopback(port), {});
  REQUIRE(c.EnsureConnected().ok());
  const int server_end = ::accept(listener, nullptr, nullptr);
  REQUIRE(server_end >= 0);
  REQUIRE(::send(server_end, "junk", 4, MSG_NOSIGNAL) == 4);
  std::this_thread::sleep_for(milliseconds(50));
  // The times are given, so the window is tested exactly.
  const auto t0 = Clock::now();
  CHECK_FALSE(c.QuietForWritesOnly(t0));  // no write-only use before: it checks
  CHECK(c.QuietForWritesOnly(t0 + std::chrono::microseconds(500)));  // busy: no check
  CHECK_FALSE(c.QuietForWritesOnly(t0 + std::chrono::microseconds(500) + milliseconds(2)));
  CHECK_FALSE(c.QuietSinceLastUse());                 // a use that reads replies always checks
  CHECK(c.QuietForWritesOnly(t0 + milliseconds(3)));  // within 1 ms of the last: busy again
  c.Close();  // a closed connection is never quiet, busy or not
  CHECK_FALSE(c.QuietForWritesOnly(t0 + milliseconds(3)));
  ::close(server_end);

  // Through the pool: a connection idle with bytes waiting is closed before a
  // write-only lease too.
  std::vector<ServerAddress> servers = {Loopback(port)};
  ServerPool pool(servers, Distribution::Create(DistributionKind::kModula, servers), {});
  {
    ServerPool::Lease lease = pool.Acquire(0);
    REQUIRE(lease->EnsureConnected().ok());
  }
  const int pooled_end = ::accept(listener, nullptr, nullptr);
  REQUIRE(pooled_end >= 0);
  REQUIRE(::send(pooled_end, "junk", 4, MSG_NOSIGNAL) == 4);
  std::this_thread::sleep_for(milliseconds(50));
  {
    ServerPool::Lease lease = pool.Acquire(0, ServerPool::Use::kWritesOnly);
    CHECK_FALSE(lease->connected());
  }
  ::close(pooled_end);
  ::close(listener);
}

TEST_CASE("the health rule: an idle connection the server closed is no failure", "[server_pool]") {
  std::vector<ServerAddress> servers = {Loopback(1)};
  ServerPoolOptions options;
  options.failure_limit = 1;
  options.retry_timeout = milliseconds(60000);
  auto make_pool = [&] {
    return std::make_unique<ServerPool>(
        servers, Distribution::Create(DistributionKind::kModula, servers), options);
  };
  Connection fresh(Loopback(1), {});
  Connection reused(Loopback(1), {});
  reused.MarkReused();
  const Status closed = Status::IoError("connection closed by the server");

  auto pool = make_pool();
  pool->Report(0, reused, closed);
  CHECK(pool->Available(0));
  pool->Report(0, reused, Status::AuthFailed("wrong password"));
  CHECK(pool->Available(0));
  pool->Report(0, reused, Status::Timeout("stalled"));
  CHECK_FALSE(pool->Available(0));

  pool = make_pool();
  pool->Report(0, fresh, closed);
  CHECK_FALSE(pool->Available(0));

  pool = make_pool();
  pool->Report(0, fresh, Status::ProtocolError("garbage"));
  CHECK_FALSE(pool->Available(0));
  pool->Report(0, fresh, Status::NotFound());  // a miss is an answer: the server is well
  CHECK(pool->Available(0));
}

TEST_CASE("fan-out reaches several servers in one call", "[fan_out]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto a = test::StartMemcached();
  auto b = test::StartMemcached();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  Connection ca(Loopback((*a)->port()), {});
  Connection cb(Loopback((*b)->port()), {});
  std::string request = "version\r\n";
  LineReader ra, rb;
  Exchange ex[2];
  ex[0].connection = &ca;
  ex[1].connection = &cb;
  ex[0].reader = &ra;
  ex[1].reader = &rb;
  for (Exchange& e : ex) e.request.push_back({request.data(), request.size()});
  REQUIRE((*b)->Kill().ok());
  RunExchanges(ex, ca.CallDeadline());
  CHECK(ex[0].status.ok());
  CHECK(ra.line.rfind("VERSION", 0) == 0);
  CHECK(ex[1].status.IsUnavailable());
}

TEST_CASE("fan-out connects to every server at once", "[fan_out]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto live = test::StartMemcached();
  REQUIRE(live.ok());
  BlackHole hole;
  const ConnectionOptions options{milliseconds(300), milliseconds(5000)};
  Connection good(Loopback((*live)->port()), options);
  Connection lost1(Loopback(hole.port()), options);
  Connection lost2(Loopback(hole.port()), options);
  std::string request = "version\r\n";
  LineReader readers[3];
  Exchange ex[3];
  Connection* connections[3] = {&lost1, &good, &lost2};
  for (int i = 0; i < 3; ++i) {
    ex[i].connection = connections[i];
    ex[i].reader = &readers[i];
    ex[i].request.push_back({request.data(), request.size()});
  }
  RunExchanges(ex, Clock::now() + milliseconds(5000));
  CHECK(ex[1].status.ok());
  CHECK(readers[1].line.rfind("VERSION", 0) == 0);
  for (int i : {0, 2}) {
    INFO(ex[i].status.ToString());
    CHECK(ex[i].status.IsTimeout());
    CHECK(ex[i].status.message().find("connect timed out") != std::string::npos);
    CHECK_FALSE(connections[i]->connected());
  }
  // Both connects began together: one after the other, the second would have
  // started only when the first gave up, a whole connect timeout later.
  const auto apart = lost2.connect_deadline() - lost1.connect_deadline();
  CHECK(apart < options.connect_timeout / 2);
}

TEST_CASE("a connection is not connected() while it connects again", "[connection]") {
  // A store asks connected() to know whether a connection is ready (Redis
  // skips its login for one): a connection that was connected once, closed,
  // and is connecting anew must not say so before its connect is done.
  int port = 0;
  const int listener = test::ListenOnLoopback(0, &port);
  REQUIRE(listener >= 0);
  Connection c(Loopback(port), {});
  REQUIRE(c.EnsureConnected().ok());
  REQUIRE(c.connected());
  // The listener takes the first connection; a filler then holds the queue's
  // one slot, so the next connect's SYN is dropped and it stays under way.
  pollfd ready{listener, POLLIN, 0};
  REQUIRE(::poll(&ready, 1, 2000) == 1);
  const int accepted = ::accept(listener, nullptr, nullptr);
  REQUIRE(accepted >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const int filler = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  (void)::connect(filler, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  pollfd filled{filler, POLLOUT, 0};
  REQUIRE(::poll(&filled, 1, 2000) == 1);
  c.Close();
  REQUIRE(c.StartConnect().ok());
  CHECK(c.connecting());
  CHECK_FALSE(c.connected());
  // A second StartConnect goes on with the connect under way.
  CHECK(c.StartConnect().ok());
  CHECK(c.connecting());
  c.Close();
  ::close(filler);
  ::close(accepted);
  ::close(listener);
}

TEST_CASE("a split connect reports a refused port and tries no further", "[connection]") {
  const test::RefusingPort refusing;
  Connection c(Loopback(refusing.port()), {});
  Status s = c.StartConnect();
  for (int i = 0; s.ok() && c.connecting() && i < 100; ++i) {
    pollfd pfd{c.fd(), POLLOUT, 0};
    REQUIRE(::poll(&pfd, 1, 1000) == 1);
    s = c.ContinueConnect();
  }
  CHECK(s.IsUnavailable());
  CHECK_FALSE(c.connected());
  CHECK_FALSE(c.connecting());
}

}  // namespace cachet::net
