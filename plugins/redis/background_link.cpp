// BackgroundLink: link threads, their stop signal, waits and reconnect backoff.
#include "background_link.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "cachet/net/connection.h"

namespace cachet::redis {

std::chrono::milliseconds ReconnectBackoff::Next() noexcept {
  const std::chrono::milliseconds pause = next_;
  next_ = std::min(next_ * 2, longest_);
  return pause;
}

BackgroundLink::BackgroundLink(ReconnectBackoff backoff)
    : backoff_(backoff), owner_pid_(net::CurrentProcessId()) {
  // Non-blocking: a nudge never blocks its caller, and draining stops when empty.
  // Without a pipe the threads still stop, at their next timeout.
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
}

BackgroundLink::~BackgroundLink() { Stop(); }

bool BackgroundLink::InOwnerProcess() const noexcept {
  return net::CurrentProcessId() == owner_pid_;
}

void BackgroundLink::Start(std::function<void()> body) { threads_.emplace_back(std::move(body)); }

void BackgroundLink::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!InOwnerProcess()) {
    // A forked child: the threads live in the parent only. Writing the shared
    // pipe would stop them there, and joining would wait forever here. The
    // thread objects are released unjoined (leaked: destroying a joinable one
    // terminates), and only this process's pipe descriptors are closed.
    static_cast<void>(new std::vector<std::thread>(std::move(threads_)));
  } else {
    stopping_.store(true);
    Signal();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }
  for (int& fd : wake_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void BackgroundLink::Nudge() noexcept { Signal(); }

void BackgroundLink::KeepConnecting(FunctionRef<Attempt()> attempt) {
  ReconnectBackoff backoff = backoff_;
  // Bounded by the stop signal: it ends every pause, and every attempt's wait.
  while (!stopping()) {
    const Attempt outcome = attempt();
    if (outcome != Attempt::kFailed) backoff.Reset();
    if (outcome == Attempt::kRetryNow) continue;
    if (Wait(-1, backoff.Next()) == Wake::kStop) return;
  }
}

BackgroundLink::Wake BackgroundLink::Wait(int fd, std::chrono::milliseconds timeout) {
  pollfd all[2] = {{}, {fd, POLLIN | POLLRDHUP, 0}};
  const std::size_t count = fd >= 0 ? 2 : 1;
  const Wake woke = Poll(all, count, timeout);
  if (woke != Wake::kTimeout || count == 1) return woke;
  return Readiness(all[1]);
}

BackgroundLink::Wake BackgroundLink::WaitAny(std::span<pollfd> fds,
                                             std::chrono::milliseconds timeout) {
  // One small allocation per wait: these threads wake per push or health check.
  std::vector<pollfd> all(fds.size() + 1);
  for (std::size_t i = 0; i < fds.size(); ++i) all[i + 1] = {fds[i].fd, POLLIN | POLLRDHUP, 0};
  const Wake woke = Poll(all.data(), all.size(), timeout);
  bool news = false;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    fds[i] = all[i + 1];
    if (fds[i].revents != 0) news = true;
  }
  if (woke != Wake::kTimeout) return woke;
  return news ? Wake::kReadable : Wake::kTimeout;
}

BackgroundLink::Wake BackgroundLink::Readiness(const pollfd& fd) noexcept {
  if ((fd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return Wake::kClosed;
  return fd.revents != 0 ? Wake::kReadable : Wake::kTimeout;
}

BackgroundLink::Wake BackgroundLink::Poll(pollfd* all, std::size_t count,
                                          std::chrono::milliseconds timeout) {
  all[0] = {wake_[0], POLLIN, 0};
  // A signal (EINTR) is no timeout: wait again for what is left.
  const net::Deadline until = net::Clock::now() + timeout;
  int ready = 0;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - net::Clock::now());
    ready = ::poll(all, count, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready >= 0 || errno != EINTR) break;
  }
  if (stopping()) return Wake::kStop;
  if (ready < 0) return Wake::kFailed;
  // kTimeout here: nothing from the pipe; the caller looks at its sockets.
  if ((all[0].revents & POLLIN) == 0) return Wake::kTimeout;
  DrainSignal();
  // A Stop() between the check and the drain may have lost its byte here: put
  // one back, so that every other thread wakes too.
  if (stopping()) {
    Signal();
    return Wake::kStop;
  }
  return Wake::kNudged;
}

void BackgroundLink::Signal() noexcept {
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
}

void BackgroundLink::DrainSignal() noexcept {
  char bytes[64];
  // Bounded: the pipe is non-blocking and holds what was written.
  while (wake_[0] >= 0 && ::read(wake_[0], bytes, sizeof bytes) > 0) {
  }
}

}  // namespace cachet::redis
