// RunSingleExchange's rare paths: waiting for room to send, and read failures.
#include "single_exchange.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "cachet/net/poll_timeout.h"

namespace cachet::memcached::single_exchange_detail {

namespace {

Status NoReply(const net::Connection& connection, net::Deadline deadline) {
  return Status::Timeout(connection.Describe(net::Clock::now() >= deadline
                                                 ? "no reply within the request timeout"
                                                 : "no reply within the I/O timeout"));
}

}  // namespace

Status SendRest(net::Connection& connection, iovec* request, int count, net::Deadline deadline,
                bool* waited) {
  // The first send was taken in part: the socket is full.
  while (count > 0) {
    *waited = true;
    pollfd pfd{connection.fd(), POLLOUT, 0};
    const int rc = ::poll(&pfd, 1, net::MillisUntil(connection.WaitEnd(deadline)));
    if (rc == 0) return NoReply(connection, deadline);
    if (rc < 0 && errno != EINTR) {
      return Status::IoError(connection.Describe(std::string("poll: ") + strerror(errno)));
    }
    if (Status s = connection.WriteSome(&request, &count); !s.ok()) return s;
  }
  return Status::OK();
}

Status ReadFailure(const net::Connection& connection, Status read, net::Deadline deadline) {
  return read.IsTimeout() ? NoReply(connection, deadline) : read;
}

}  // namespace cachet::memcached::single_exchange_detail
