// FanOut: one poll() loop that writes requests to and reads replies from several
// servers at once.
#include "cachet/net/fan_out.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace cachet::net {

ReplyReader::~ReplyReader() = default;

namespace {

// The progress of one exchange inside the loop.
struct Progress {
  Exchange* exchange;
  iovec* unsent;
  int unsent_count;
  bool active;
};

void Fail(Progress& p, Status status) {
  p.exchange->status = std::move(status);
  p.exchange->connection->Close();
  p.active = false;
}

// Sends what the socket takes now; finishes the exchange if nothing is expected.
void Write(Progress& p) {
  if (p.unsent_count == 0) return;
  Status s = p.exchange->connection->WriteSome(&p.unsent, &p.unsent_count);
  if (!s.ok()) return Fail(p, std::move(s));
  if (p.unsent_count == 0 && p.exchange->reader->done()) p.active = false;
}

void Read(Progress& p) {
  Connection& c = *p.exchange->connection;
  Status s = c.ReadSome();
  if (s.ok()) s = p.exchange->reader->Consume(c.buffer());
  if (!s.ok()) return Fail(p, std::move(s));
  if (p.exchange->reader->done()) p.active = false;
}

int MillisUntil(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT_MAX));
}

void Start(Exchange& e, Progress* p) {
  *p = {&e, e.request.data(), static_cast<int>(e.request.size()), true};
  e.status = e.connection->EnsureConnected();
  if (!e.status.ok()) {
    p->active = false;
    return;
  }
  Write(*p);
}

}  // namespace

namespace {

// The loop itself, over caller-provided scratch of exchanges.size() entries.
void RunLoop(std::span<Exchange> exchanges, Deadline deadline, Progress* progress, pollfd* fds) {
  for (std::size_t i = 0; i < exchanges.size(); ++i) Start(exchanges[i], &progress[i]);
  for (;;) {
    std::size_t waiting = 0;
    for (std::size_t i = 0; i < exchanges.size(); ++i) {
      const Progress& p = progress[i];
      short events = p.unsent_count > 0 ? POLLIN | POLLOUT : POLLIN;
      fds[i] = {p.active ? p.exchange->connection->fd() : -1, events, 0};
      waiting += p.active ? 1 : 0;
    }
    if (waiting == 0) return;
    int rc = ::poll(fds, exchanges.size(), MillisUntil(deadline));
    if (rc < 0 && errno == EINTR) continue;
    for (std::size_t i = 0; i < exchanges.size(); ++i) {
      Progress& p = progress[i];
      if (!p.active) continue;
      Connection& c = *p.exchange->connection;
      if (rc == 0) {
        Fail(p, Status::Timeout(c.Describe("no reply within the I/O timeout")));
      } else if (rc < 0) {
        Fail(p, Status::IoError(c.Describe(std::string("poll: ") + strerror(errno))));
      } else {
        if (fds[i].revents & POLLOUT) Write(p);
        if (p.active && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) Read(p);
      }
    }
  }
}

// Pools of a few servers, the common case, need no heap for the loop's state.
constexpr std::size_t kStackExchanges = 16;

}  // namespace

void RunExchanges(std::span<Exchange> exchanges, Deadline deadline) {
  if (exchanges.size() <= kStackExchanges) {
    Progress progress[kStackExchanges];
    pollfd fds[kStackExchanges];
    RunLoop(exchanges, deadline, progress, fds);
    return;
  }
  std::vector<Progress> progress(exchanges.size());
  std::vector<pollfd> fds(exchanges.size());
  RunLoop(exchanges, deadline, progress.data(), fds.data());
}

}  // namespace cachet::net
