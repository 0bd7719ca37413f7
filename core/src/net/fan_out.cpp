// FanOut: one poll() loop that connects to, writes requests to and reads replies
// from several servers at once.
#include "cachet/net/fan_out.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "cachet/net/poll_timeout.h"

namespace cachet::net {

ReplyReader::~ReplyReader() = default;

namespace {

// The progress of one exchange inside the loop.
struct Progress {
  Exchange* exchange;
  iovec* unsent;
  int unsent_count;
  bool active;
  Deadline quiet_until;  // io_timeout after bytes last moved: then it has stalled
};

void Fail(Progress& p, Status status) {
  p.exchange->status = std::move(status);
  p.exchange->connection->Close();
  p.active = false;
}

// The exchange moved bytes at `now`: the server is not stalled.
void Moved(Progress& p, Deadline now) {
  p.quiet_until = now + p.exchange->connection->options().io_timeout;
}

// The reader has every reply it expects: bytes after them are nobody's answer,
// so the connection cannot be trusted with another request.
void Finish(Progress& p) {
  Connection& c = *p.exchange->connection;
  if (!c.buffer().empty()) return Fail(p, c.LeftoverError());
  p.active = false;
}

// Sends what the socket takes now; finishes the exchange if nothing is expected.
void Write(Progress& p, Deadline now) {
  if (p.unsent_count == 0) return;
  Status s = p.exchange->connection->WriteSome(&p.unsent, &p.unsent_count);
  if (!s.ok()) return Fail(p, std::move(s));
  Moved(p, now);
  if (p.unsent_count == 0 && p.exchange->reader->done()) Finish(p);
}

void Read(Progress& p, Deadline now) {
  Connection& c = *p.exchange->connection;
  Status s = c.ReadSome();
  if (s.ok()) s = p.exchange->reader->Consume(c.buffer());
  if (!s.ok()) return Fail(p, std::move(s));
  Moved(p, now);
  if (p.exchange->reader->done()) Finish(p);
}

// Begins the exchange: connects (without waiting, so that every server's connect
// runs at once) and writes what the socket takes.
void Start(Exchange& e, Progress* p, Deadline batch) {
  const Deadline now = Clock::now();
  *p = {&e, e.request.data(), static_cast<int>(e.request.size()), true, {}};
  Moved(*p, now);
  e.status = e.connection->StartConnect(batch);
  if (!e.status.ok()) return Fail(*p, std::move(e.status));
  if (!e.connection->connecting()) Write(*p, now);
}

// The socket of a connecting exchange polled writable (or failed).
void Connected(Progress& p, Deadline now) {
  Connection& c = *p.exchange->connection;
  Status s = c.ContinueConnect();
  if (!s.ok()) return Fail(p, std::move(s));
  if (c.connecting()) return;
  Moved(p, now);
  Write(p, now);
}

// When this exchange gives up: its connect timeout while connecting, after
// io_timeout of silence afterwards; never after the batch's deadline.
Deadline DeadlineOf(const Progress& p, Deadline batch) {
  const Connection& c = *p.exchange->connection;
  return std::min(c.connecting() ? c.connect_deadline() : p.quiet_until, batch);
}

// The timeout of a server that did not answer by `now`: the call's deadline
// (`batch`) ran out, or the server was silent for io_timeout.
Status NoReply(const Connection& c, Deadline now, Deadline batch) {
  const char* why = now >= batch     ? "no reply within the request timeout"
                    : c.connecting() ? "connect timed out"
                                     : "no reply within the I/O timeout";
  return Status::Timeout(c.Describe(why));
}

// An exchange whose deadline passed with nothing to do: timeout.
void Expire(Progress& p, Deadline now, Deadline batch) {
  Fail(p, NoReply(*p.exchange->connection, now, batch));
}

// A lone exchange whose request went out whole (a single operation, nearly
// always): its replies are awaited with ReadMore, one blocking recv() when they
// arrive at once, instead of poll() and recv(). False when the poll loop is
// needed (a connect under way, or a request the socket did not take at once).
bool AwaitAlone(Progress& p, Deadline deadline) {
  if (!p.active) return true;
  Connection& c = *p.exchange->connection;
  if (c.connecting() || p.unsent_count > 0) return false;
  while (p.active) {
    // ReadMore waits io_timeout at most, and never past the deadline.
    Status s = c.ReadMore(deadline);
    if (s.ok()) s = p.exchange->reader->Consume(c.buffer());
    if (!s.ok()) {
      Fail(p, s.IsTimeout() ? NoReply(c, Clock::now(), deadline) : std::move(s));
    } else if (p.exchange->reader->done()) {
      Finish(p);
    }
  }
  return true;
}

}  // namespace

namespace {

// The loop itself, over caller-provided scratch of exchanges.size() entries.
void RunLoop(std::span<Exchange> exchanges, Deadline deadline, Progress* progress, pollfd* fds) {
  for (std::size_t i = 0; i < exchanges.size(); ++i) Start(exchanges[i], &progress[i], deadline);
  if (exchanges.size() == 1 && AwaitAlone(progress[0], deadline)) return;
  for (;;) {
    std::size_t waiting = 0;
    Deadline next = deadline;
    for (std::size_t i = 0; i < exchanges.size(); ++i) {
      const Progress& p = progress[i];
      const bool connecting = p.active && p.exchange->connection->connecting();
      short events = connecting ? POLLOUT : p.unsent_count > 0 ? POLLIN | POLLOUT : POLLIN;
      fds[i] = {p.active ? p.exchange->connection->fd() : -1, events, 0};
      if (!p.active) continue;
      ++waiting;
      next = std::min(next, DeadlineOf(p, deadline));
    }
    if (waiting == 0) return;
    int rc = ::poll(fds, exchanges.size(), MillisUntil(next));
    if (rc < 0 && errno == EINTR) continue;
    const int poll_errno = errno;
    const Deadline now = Clock::now();
    for (std::size_t i = 0; i < exchanges.size(); ++i) {
      Progress& p = progress[i];
      if (!p.active) continue;
      Connection& c = *p.exchange->connection;
      const short revents = rc > 0 ? fds[i].revents : 0;
      if (rc < 0) {
        Fail(p, Status::IoError(c.Describe(std::string("poll: ") + strerror(poll_errno))));
      } else if (revents == 0) {
        if (now >= DeadlineOf(p, deadline)) Expire(p, now, deadline);
      } else if (c.connecting()) {
        Connected(p, now);
      } else {
        if (revents & POLLOUT) Write(p, now);
        if (p.active && (revents & (POLLIN | POLLHUP | POLLERR))) Read(p, now);
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
