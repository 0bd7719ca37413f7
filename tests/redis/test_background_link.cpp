// The Redis store's background-link helper (background_link.h), without a
// server: socket pairs stand in for links. Waits are bounded by generous
// timeouts (30 s) that a correct helper never reaches; nothing here asserts
// how fast anything is, only which event ended a wait.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "background_link.h"
#include "support/waits.h"

using cachet::redis::BackgroundLink;
using cachet::redis::ReconnectBackoff;
using Wake = BackgroundLink::Wake;
using Attempt = BackgroundLink::Attempt;
using std::chrono::milliseconds;

namespace {

// Longer than any test should take: a wait that runs this long has failed.
constexpr milliseconds kNever{30000};

// A connected pair of local sockets, closed on destruction.
struct SocketPair {
  SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()) == 0); }
  ~SocketPair() {
    for (const int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  void ClosePeer() {
    ::close(fds[1]);
    fds[1] = -1;
  }
  std::array<int, 2> fds{-1, -1};  // [0] is waited on, [1] is the peer
};

// Polls `done` every millisecond until it holds or kNever passes.
bool WaitUntil(const std::function<bool()>& done) {
  return cachet::test::WaitUntil(done, kNever, milliseconds(1));
}

// A link whose first pause is long enough that only a wake can end it.
BackgroundLink LongPauses() { return BackgroundLink(ReconnectBackoff(kNever, kNever)); }

// True if thread `id` of this process is blocked in poll() (or ppoll(), which
// the C library may call for it), as /proc/self/task/<id>/syscall shows.
bool InPoll(pid_t id) {
  std::ifstream syscall("/proc/self/task/" + std::to_string(id) + "/syscall");
  long number = -1;  // "running" when not in a system call: no number
  if (!(syscall >> number)) return false;
#ifdef SYS_poll
  if (number == SYS_poll) return true;
#endif
  return number == SYS_ppoll;
}

std::atomic<int> g_signals{0};
void CountSignal(int) { g_signals.fetch_add(1); }

}  // namespace

TEST_CASE("background link: the backoff doubles up to its cap and starts again after a link",
          "[unit][redis][link]") {
  ReconnectBackoff backoff(milliseconds(50), milliseconds(2000));
  std::vector<long> pauses;
  for (int i = 0; i < 8; ++i) pauses.push_back(backoff.Next().count());
  CHECK(pauses == std::vector<long>{50, 100, 200, 400, 800, 1600, 2000, 2000});
  backoff.Reset();
  CHECK(backoff.Next() == milliseconds(50));
  CHECK(backoff.Next() == milliseconds(100));

  ReconnectBackoff sentinel(milliseconds(50), milliseconds(1000));
  for (int i = 0; i < 5; ++i) (void)sentinel.Next();  // 50 .. 800
  CHECK(sentinel.Next() == milliseconds(1000));
  CHECK(sentinel.Next() == milliseconds(1000));
}

TEST_CASE("background link: a wait with nothing to hear ends at its timeout",
          "[unit][redis][link]") {
  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  CHECK(link.Wait(-1, milliseconds(20)) == Wake::kTimeout);
  SocketPair pair;
  CHECK(link.Wait(pair.fds[0], milliseconds(20)) == Wake::kTimeout);
  CHECK(link.Wait(pair.fds[0], milliseconds(0)) == Wake::kTimeout);
}

TEST_CASE("background link: a socket with bytes or a closed peer ends a wait",
          "[unit][redis][link]") {
  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  SocketPair pair;
  REQUIRE(::write(pair.fds[1], "+x\r\n", 4) == 4);
  CHECK(link.Wait(pair.fds[0], kNever) == Wake::kReadable);
  pair.ClosePeer();
  CHECK(link.Wait(pair.fds[0], kNever) == Wake::kClosed);
}

TEST_CASE("background link: WaitAny says which socket has news", "[unit][redis][link]") {
  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  SocketPair quiet;
  SocketPair talking;
  SocketPair closing;
  std::array<pollfd, 3> fds{};
  fds[0].fd = quiet.fds[0];
  fds[1].fd = talking.fds[0];
  fds[2].fd = closing.fds[0];
  CHECK(link.WaitAny(fds, milliseconds(20)) == Wake::kTimeout);

  REQUIRE(::write(talking.fds[1], "+x\r\n", 4) == 4);
  closing.ClosePeer();
  CHECK(link.WaitAny(fds, kNever) == Wake::kReadable);
  CHECK(BackgroundLink::Readiness(fds[0]) == Wake::kTimeout);
  CHECK(BackgroundLink::Readiness(fds[1]) == Wake::kReadable);
  CHECK(BackgroundLink::Readiness(fds[2]) == Wake::kClosed);
}

TEST_CASE("background link: Stop wakes every waiting thread", "[unit][redis][link]") {
  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  constexpr int kThreads = 3;
  std::array<std::atomic<int>, kThreads> woke{};  // -1: still waiting
  std::atomic<int> waiting{0};
  for (int i = 0; i < kThreads; ++i) {
    woke[i].store(-1);
    link.Start([&, i] {
      waiting.fetch_add(1);
      woke[i].store(static_cast<int>(link.Wait(-1, kNever)));
    });
  }
  REQUIRE(WaitUntil([&] { return waiting.load() == kThreads; }));
  std::this_thread::sleep_for(milliseconds(20));  // let them reach poll()
  for (const auto& w : woke) CHECK(w.load() == -1);
  link.Stop();  // joins: returns once every thread's wait has ended
  for (const auto& w : woke) CHECK(w.load() == static_cast<int>(Wake::kStop));
  CHECK(link.stopping());
  link.Stop();  // a second Stop is harmless
}

TEST_CASE("background link: a nudge wakes a waiting thread once, without stopping it",
          "[unit][redis][link]") {
  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  std::atomic<int> first{-1};
  std::atomic<int> second{-1};
  std::atomic<bool> started{false};
  link.Start([&] {
    started.store(true);
    first.store(static_cast<int>(link.Wait(-1, kNever)));
    second.store(static_cast<int>(link.Wait(-1, kNever)));
  });
  REQUIRE(WaitUntil([&] { return started.load(); }));
  link.Nudge();
  REQUIRE(WaitUntil([&] { return first.load() != -1; }));
  CHECK(first.load() == static_cast<int>(Wake::kNudged));
  CHECK_FALSE(link.stopping());
  std::this_thread::sleep_for(milliseconds(20));
  CHECK(second.load() == -1);  // the nudge was used up by the first wait
  link.Stop();
  CHECK(second.load() == static_cast<int>(Wake::kStop));

  // A nudge sent while nobody waits ends the next wait, and only that one.
  BackgroundLink idle(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  idle.Nudge();
  idle.Nudge();
  CHECK(idle.Wait(-1, kNever) == Wake::kNudged);
  CHECK(idle.Wait(-1, milliseconds(20)) == Wake::kTimeout);
}

TEST_CASE("background link: a signal interrupting poll() does not end the wait",
          "[unit][redis][link]") {
  struct sigaction count = {};
  count.sa_handler = &CountSignal;  // no SA_RESTART: poll() fails with EINTR
  sigemptyset(&count.sa_mask);
  struct sigaction before = {};
  REQUIRE(::sigaction(SIGUSR1, &count, &before) == 0);
  g_signals.store(0);

  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  std::atomic<pid_t> waiter_id{0};
  std::atomic<int> woke{-1};
  pthread_t waiter{};
  link.Start([&] {
    waiter = pthread_self();
    waiter_id.store(::gettid());
    woke.store(static_cast<int>(link.Wait(-1, kNever)));
  });
  REQUIRE(WaitUntil([&] { return waiter_id.load() != 0; }));
  // Each signal goes out once the waiter sits in poll(), so that it lands
  // there, and once the one before it was handled: a signal sent while the
  // same one is still pending would merge with it.
  constexpr int kSignals = 3;
  for (int sent = 0; sent < kSignals; ++sent) {
    INFO("signal " << sent + 1);
    REQUIRE(WaitUntil([&] { return woke.load() != -1 || InPoll(waiter_id.load()); }));
    REQUIRE(woke.load() == -1);  // still waiting: EINTR is no timeout
    REQUIRE(pthread_kill(waiter, SIGUSR1) == 0);
    REQUIRE(WaitUntil([&] { return g_signals.load() == sent + 1; }));
  }
  // Back in poll() after the last signal, or ended by it.
  REQUIRE(WaitUntil([&] { return woke.load() != -1 || InPoll(waiter_id.load()); }));
  CHECK(woke.load() == -1);
  link.Stop();
  CHECK(woke.load() == static_cast<int>(Wake::kStop));
  REQUIRE(::sigaction(SIGUSR1, &before, nullptr) == 0);
}

TEST_CASE("background link: attempts repeat until Stop, pausing as each asks",
          "[unit][redis][link]") {
  SECTION("failed attempts repeat after their pauses; Stop ends a pause") {
    BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(4)));
    std::atomic<int> attempts{0};
    link.Start([&] {
      link.KeepConnecting([&] {
        attempts.fetch_add(1);
        return Attempt::kFailed;
      });
    });
    REQUIRE(WaitUntil([&] { return attempts.load() >= 5; }));
    link.Stop();
    const int made = attempts.load();
    std::this_thread::sleep_for(milliseconds(20));
    CHECK(attempts.load() == made);  // the thread is gone
  }
  SECTION("a nudge ends a pause") {
    BackgroundLink link = LongPauses();
    std::atomic<int> attempts{0};
    link.Start([&] {
      link.KeepConnecting([&] {
        attempts.fetch_add(1);
        return Attempt::kWasUp;
      });
    });
    REQUIRE(WaitUntil([&] { return attempts.load() == 1; }));
    link.Nudge();
    CHECK(WaitUntil([&] { return attempts.load() == 2; }));
    link.Stop();  // ends the second pause
  }
  SECTION("kRetryNow after a link that lasted goes again without a pause") {
    // Pauses of 30 ms, and a link lasts once it was up 30 ms.
    BackgroundLink link(ReconnectBackoff(milliseconds(30), milliseconds(30)));
    std::atomic<int> attempts{0};
    link.Start([&] {
      link.KeepConnecting([&] {
        if (attempts.fetch_add(1) == 0) std::this_thread::sleep_for(milliseconds(40));
        return Attempt::kRetryNow;
      });
    });
    CHECK(WaitUntil([&] { return attempts.load() >= 2; }));
    link.Stop();
  }
  SECTION("links lost as soon as they are up keep doubling the pauses") {
    // A peer that answers, then sends what cannot be read (or moves again and
    // again): the pauses grow as after failures, 10 ms up to 200 ms.
    for (const Attempt lost : {Attempt::kWasUp, Attempt::kRetryNow}) {
      BackgroundLink link(ReconnectBackoff(milliseconds(10), milliseconds(200)));
      std::atomic<int> attempts{0};
      link.Start([&] {
        link.KeepConnecting([&] {
          attempts.fetch_add(1);
          return lost;
        });
      });
      std::this_thread::sleep_for(milliseconds(1000));
      link.Stop();
      // 10 + 20 + 40 + 80 + 160 + 200 + ... ms: about nine in a second, where
      // pauses that start over would make a hundred (or, with no pause, more).
      CHECK(attempts.load() <= 15);
    }
  }
}

TEST_CASE("background link: Stop in a forked child leaves the parent's threads waiting",
          "[unit][redis][link][fork]") {
  BackgroundLink link(ReconnectBackoff(milliseconds(1), milliseconds(1)));
  std::atomic<bool> started{false};
  std::atomic<int> woke{-1};
  link.Start([&] {
    started.store(true);
    woke.store(static_cast<int>(link.Wait(-1, kNever)));
  });
  REQUIRE(WaitUntil([&] { return started.load(); }));

  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // No thread here: Stop must neither join (it would hang) nor signal the
    // parent's thread through the shared pipe.
    const bool owner = link.InOwnerProcess();
    link.Stop();
    ::_exit(owner ? 1 : 0);
  }
  int status = 0;
  const bool exited = WaitUntil([&] { return ::waitpid(child, &status, WNOHANG) == child; });
  if (!exited) {
    ::kill(child, SIGKILL);
    (void)::waitpid(child, &status, 0);
  }
  REQUIRE(exited);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::this_thread::sleep_for(milliseconds(20));
  CHECK(woke.load() == -1);  // the parent's thread heard nothing
  CHECK(link.InOwnerProcess());
  link.Stop();
  CHECK(woke.load() == static_cast<int>(Wake::kStop));
}
