// RunSingleExchange: send whole, then read until the reader is done.
#include "single_exchange.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

namespace cachet::memcached {

namespace {

// Rounded up, so that a wait never ends just before its deadline and spins.
int MillisUntil(net::Deadline deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - net::Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT_MAX));
}

Status NoReply(const net::Connection& connection) {
  return Status::Timeout(connection.Describe("no reply within the I/O timeout"));
}

// Sends every piece. The socket takes a single operation's request at once but
// for a large value, which may have to wait for room.
Status SendWhole(net::Connection& connection, iovec* request, int count, net::Deadline deadline) {
  Status s = connection.WriteSome(&request, &count);
  while (s.ok() && count > 0) {
    pollfd pfd{connection.fd(), POLLOUT, 0};
    const int rc = ::poll(&pfd, 1, MillisUntil(deadline));
    if (rc == 0) return NoReply(connection);
    if (rc < 0 && errno != EINTR) {
      return Status::IoError(connection.Describe(std::string("poll: ") + strerror(errno)));
    }
    s = connection.WriteSome(&request, &count);
  }
  return s;
}

}  // namespace

Status RunSingleExchange(net::Connection& connection, iovec* request, int count,
                         net::ReplyReader& reader, net::Deadline deadline) {
  Status s = SendWhole(connection, request, count, deadline);
  while (s.ok() && !reader.done()) {
    s = connection.ReadMore(deadline);
    if (s.ok()) {
      s = reader.Consume(connection.buffer());
    } else if (s.IsTimeout()) {
      s = NoReply(connection);
    }
  }
  if (!s.ok()) connection.Close();
  return s;
}

}  // namespace cachet::memcached
