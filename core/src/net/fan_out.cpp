// FanOut: one poll() loop that connects to, writes requests to and reads replies
// from several servers at once; each exchange is an ExchangeState (exchange.h).
#include "cachet/net/fan_out.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "cachet/net/exchange.h"
#include "cachet/net/poll_timeout.h"

namespace cachet::net {

ReplyReader::~ReplyReader() = default;

ConnectionSetup::~ConnectionSetup() = default;

namespace {

// The progress of one exchange inside the loop: its state machine (exchange.h),
// the reader it feeds, and when its server counts as stalled.
struct Progress {
  Exchange* exchange;
  ExchangeState state;
  Deadline quiet_until;          // io_timeout after bytes last moved: then it has stalled
  ReplyReader* reader;           // the login's while it runs, then the exchange's
  bool anew;                     // the exchange connects its connection: a login may come first
  std::unique_ptr<Login> login;  // the login under way, if any

  Connection& connection() const { return *exchange->connection; }
  bool active() const { return state.want() != Want::kDone; }
};

// The exchange moved bytes at `now`: the server is not stalled.
void Moved(Progress& p, Deadline now) { p.quiet_until = now + p.connection().options().io_timeout; }

// Sends the exchange's own request (what the socket takes now).
void SendRequest(Progress& p) {
  Exchange& e = *p.exchange;
  p.reader = e.reader;
  e.sent = true;
  p.state.Begin(e.request.data(), static_cast<int>(e.request.size()));
  p.state.Write(*e.connection, *p.reader);
}

// After a step: a login that ended well hands the connection to the request.
void AfterLogin(Progress& p) {
  if (p.login == nullptr || p.state.want() != Want::kDone || !p.state.status().ok()) return;
  p.login.reset();
  SendRequest(p);
}

// The connect is over: the store's login goes first on a connection connected
// anew (when it has one), else the request.
void Begin(Progress& p) {
  Exchange& e = *p.exchange;
  if (p.anew && e.setup != nullptr) p.login = e.setup->NewLogin(*e.connection);
  if (p.login == nullptr) return SendRequest(p);
  int count = 0;
  iovec* request = p.login->Request(&count);
  p.reader = p.login.get();
  p.state.Begin(request, count);
  p.state.Write(*e.connection, *p.reader);
  AfterLogin(p);
}

// Begins the exchange: connects (without waiting, so that every server's connect
// runs at once) and writes what the socket takes.
void Start(Exchange& e, Progress* p, Deadline batch) {
  const Deadline now = Clock::now();
  p->exchange = &e;
  p->reader = e.reader;
  e.sent = false;
  p->anew = !e.connection->connected();
  p->state.Begin(e.request.data(), static_cast<int>(e.request.size()));
  Moved(*p, now);
  if (Status s = e.connection->StartConnect(batch); !s.ok()) {
    p->state.Fail(*e.connection, std::move(s));
  } else if (!e.connection->connecting()) {
    Begin(*p);
  }
}

// The socket of a connecting exchange polled ready for its connect's next step
// (the TCP connect's end, or a TLS handshake message), or failed.
void Connected(Progress& p, Deadline now) {
  Connection& c = p.connection();
  Status s = c.ContinueConnect();
  if (!s.ok()) {
    p.state.Fail(c, std::move(s));
    return;
  }
  if (c.connecting()) return;
  Moved(p, now);
  Begin(p);
}

// One poll() answer for a connected exchange: the machine writes and reads as
// the events allow (ExchangeState::Ready), and ends it past the call's deadline.
void Step(Progress& p, short revents, Deadline now, Deadline batch) {
  p.state.Ready(p.connection(), *p.reader, revents, now, batch);
  Moved(p, now);
  AfterLogin(p);
}

// When this exchange gives up: its connect timeout while connecting, after
// io_timeout of silence afterwards; never after the batch's deadline.
Deadline DeadlineOf(const Progress& p, Deadline batch) {
  const Connection& c = p.connection();
  return std::min(c.connecting() ? c.connect_deadline() : p.quiet_until, batch);
}

// The loop itself, over caller-provided scratch of exchanges.size() entries.
void RunLoop(std::span<Exchange> exchanges, Deadline deadline, Progress* progress, pollfd* fds) {
  for (std::size_t i = 0; i < exchanges.size(); ++i) Start(exchanges[i], &progress[i], deadline);
  // A lone exchange past its connect and login (a single operation, nearly
  // always) waits with the lone driver: one blocking recv() instead of poll()
  // and recv().
  if (exchanges.size() == 1 && progress[0].active() && !progress[0].connection().connecting() &&
      progress[0].login == nullptr) {
    Progress& p = progress[0];
    DriveAlone(p.state, p.state.want(), p.connection(), *p.reader, Clock::now(), deadline);
    return;
  }
  for (;;) {
    std::size_t waiting = 0;
    Deadline next = deadline;
    for (std::size_t i = 0; i < exchanges.size(); ++i) {
      const Progress& p = progress[i];
      if (!p.active()) {
        fds[i] = {-1, 0, 0};
        continue;
      }
      // A connect (its TLS handshake included) says what it waits for, and
      // then the exchange (over TLS, perhaps the other event than its step
      // suggests).
      const short events = p.connection().connecting() ? p.connection().ConnectEvents()
                                                       : p.state.Events(p.connection(), *p.reader);
      fds[i] = {p.connection().fd(), events, 0};
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
      if (!p.active()) continue;
      Connection& c = p.connection();
      const short revents = rc > 0 ? fds[i].revents : 0;
      if (rc < 0) {
        p.state.Fail(c, Status::IoError(c.Describe(std::string("poll: ") + strerror(poll_errno))));
      } else if (revents == 0) {
        if (now >= DeadlineOf(p, deadline)) p.state.Expire(c, now, deadline);
      } else if (c.connecting()) {
        Connected(p, now);
      } else {
        Step(p, revents, now, deadline);
      }
    }
  }
}

// Pools of a few servers, the common case, need no heap for the loop's state.
constexpr std::size_t kStackExchanges = 16;

// Each exchange's outcome, from its state machine.
void Collect(std::span<Exchange> exchanges, Progress* progress) {
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    exchanges[i].status = progress[i].state.TakeStatus();
  }
}

}  // namespace

void RunExchanges(std::span<Exchange> exchanges, Deadline deadline) {
  if (exchanges.size() <= kStackExchanges) {
    Progress progress[kStackExchanges];
    pollfd fds[kStackExchanges];
    RunLoop(exchanges, deadline, progress, fds);
    Collect(exchanges, progress);
    return;
  }
  std::vector<Progress> progress(exchanges.size());
  std::vector<pollfd> fds(exchanges.size());
  RunLoop(exchanges, deadline, progress.data(), fds.data());
  Collect(exchanges, progress.data());
}

}  // namespace cachet::net
