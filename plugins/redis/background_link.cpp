// BackgroundLink: link threads, their stop signal, waits and reconnect backoff.
#include "background_link.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "cachet/net/connection.h"
#include "resp_frames.h"

namespace cachet::redis {

namespace {

// PING: the same bytes in RESP2 and RESP3, subscribed or not.
constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

// Hands every whole frame in `link`'s buffer to its reader.
Status HandleFrames(const ListenedLink& link) {
  return TakeFrames(*link.parser, link.connection->buffer(), *link.connection,
                    [&](RespValue frame, Frame&) { return link.reader->Handle(frame); });
}

// `link` is lost for `why`: closed, so that whoever keeps it opens it again.
Status Lose(const ListenedLink& link, Status why) {
  link.connection->Close();
  return why;
}

// "host:port: tracking link: <what>".
std::string Described(const ListenedLink& link, std::string_view what) {
  return link.connection->Describe(std::string(link.name) + ": " + std::string(what));
}

}  // namespace

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
    const auto began = std::chrono::steady_clock::now();
    const Attempt outcome = attempt();
    // A link that lasted starts the pauses over, and one that must follow a
    // move is made again at once; a link lost as soon as it was up (a peer
    // that answers, then sends what cannot be read, or moves again and again)
    // keeps doubling them, so no peer can make this thread reconnect in a loop.
    const bool lasted = std::chrono::steady_clock::now() - began >= backoff.longest();
    if (outcome != Attempt::kFailed && lasted) backoff.Reset();
    if (outcome == Attempt::kRetryNow && lasted) continue;
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

Status BackgroundLink::Listen(std::span<const ListenedLink> links,
                              std::chrono::milliseconds health_interval) {
  return Listen(links, health_interval, [] { return false; }, [] {});
}

Status BackgroundLink::Listen(std::span<const ListenedLink> links,
                              std::chrono::milliseconds health_interval,
                              FunctionRef<bool()> moved, FunctionRef<void()> every_interval) {
  const net::Deadline start = net::Clock::now();
  // Per link: once silent past this time it gets a PING, or is lost if one is due.
  std::vector<net::Deadline> quiet_until(links.size(), start + health_interval);
  net::Deadline next_tick = start + health_interval;
  std::vector<pollfd> fds(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    fds[i].fd = links[i].connection->fd();
    // What came with the link's answer first: the socket may have nothing more to say.
    if (Status s = HandleFrames(links[i]); !s.ok()) return Lose(links[i], std::move(s));
  }
  // Bounded by the links: one is lost, what they follow moves, or we stop.
  for (;;) {
    if (moved()) return Status::OK();
    net::Deadline now = net::Clock::now();
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (now < quiet_until[i]) continue;
      // The health rule: silent an interval after a PING is lost, else a PING.
      net::Connection& connection = *links[i].connection;
      if (links[i].reader->pongs_due() > 0) {
        return Lose(links[i], Status::Timeout(Described(links[i], "no answer to PING")));
      }
      const std::string_view pieces[] = {kPing};
      if (Status s = connection.WriteAll(pieces, connection.CallDeadline()); !s.ok()) {
        return Lose(links[i], std::move(s));
      }
      links[i].reader->PingSent();
      quiet_until[i] = now + health_interval;
    }
    if (now >= next_tick) {
      every_interval();
      next_tick = net::Clock::now() + health_interval;
      continue;  // it may have moved what the links follow
    }
    // Until the first link to look at again, or the next interval's check.
    const net::Deadline wake_at =
        std::min(*std::min_element(quiet_until.begin(), quiet_until.end()), next_tick);
    const Wake woke = WaitAny(fds, std::chrono::ceil<std::chrono::milliseconds>(wake_at - now));
    if (woke == Wake::kStop) return Status::Unavailable("stopping");
    if (woke == Wake::kFailed) {
      return Status::IoError(std::string("background links: poll failed: ") + strerror(errno));
    }
    // A nudge is seen at the top (moved()); the sockets' news is read either way.
    for (std::size_t i = 0; i < links.size(); ++i) {
      const Wake news = Readiness(fds[i]);
      if (news == Wake::kClosed) {
        // Gone (FIN, RST): what came before the close is handled first (a
        // switch announced as a sentinel leaves), then the link is lost.
        if (links[i].connection->ReadSome().ok()) (void)HandleFrames(links[i]);
        return Lose(links[i], Status::IoError(Described(links[i], "closed by the server")));
      }
      if (news != Wake::kReadable) continue;
      net::Connection& connection = *links[i].connection;
      const std::size_t before = connection.buffer().size();
      if (Status s = connection.ReadSome(); !s.ok()) return Lose(links[i], std::move(s));
      if (connection.buffer().size() > before) {
        quiet_until[i] = net::Clock::now() + health_interval;  // heard from: not silent
      }
      if (Status s = HandleFrames(links[i]); !s.ok()) return Lose(links[i], std::move(s));
    }
  }
}

}  // namespace cachet::redis
