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
// for a large value, which may have to wait for room; *waited says whether it did.
Status SendWhole(net::Connection& connection, iovec* request, int count, net::Deadline deadline,
                 bool* waited) {
  Status s = connection.WriteSome(&request, &count);
  while (s.ok() && count > 0) {
    *waited = true;
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

// Reads until the reader is done. Each step returns its own Status rather than
// assigning one Status over and over: the usual exchange then moves none.
Status ReceiveReply(net::Connection& connection, net::ReplyReader& reader,
                    net::Clock::time_point start, net::Deadline deadline, bool fresh) {
  // Right after a send that did not wait, the exchange is still at `start`: the
  // first read decides between a blocking recv and poll() with that reading.
  for (bool first = fresh; !reader.done(); first = false) {
    Status read = first ? connection.ReadMore(deadline, start) : connection.ReadMore(deadline);
    if (read.IsTimeout()) return NoReply(connection);
    if (!read.ok()) return read;
    Status consumed = reader.Consume(connection.buffer());
    if (!consumed.ok()) return consumed;
  }
  return Status::OK();
}

Status Exchange(net::Connection& connection, iovec* request, int count, net::ReplyReader& reader,
                net::Clock::time_point start, net::Deadline deadline) {
  bool waited = false;
  Status sent = SendWhole(connection, request, count, deadline, &waited);
  if (!sent.ok()) return sent;
  return ReceiveReply(connection, reader, start, deadline, !waited);
}

}  // namespace

Status RunSingleExchange(net::Connection& connection, iovec* request, int count,
                         net::ReplyReader& reader, net::Clock::time_point start,
                         net::Deadline deadline) {
  Status s = Exchange(connection, request, count, reader, start, deadline);
  if (!s.ok()) connection.Close();
  return s;
}

}  // namespace cachet::memcached
