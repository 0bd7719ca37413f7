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

// The steps below report a failure through `*failure` and return false, so
// that the usual exchange moves no Status: a move copies the (empty) message
// with a memcpy call. Both are inlined into RunSingleExchange, whose one frame
// serves the whole exchange.

// Sends every piece. The socket takes a single operation's request at once but
// for a large value, which may have to wait for room; *waited says whether it did.
[[gnu::always_inline]] inline bool SendWhole(net::Connection& connection, iovec* request, int count,
                                             net::Deadline deadline, bool* waited,
                                             Status* failure) {
  Status s = connection.WriteSome(&request, &count);
  while (s.ok() && count > 0) {
    *waited = true;
    pollfd pfd{connection.fd(), POLLOUT, 0};
    const int rc = ::poll(&pfd, 1, MillisUntil(deadline));
    if (rc == 0) {
      *failure = NoReply(connection);
      return false;
    }
    if (rc < 0 && errno != EINTR) {
      *failure = Status::IoError(connection.Describe(std::string("poll: ") + strerror(errno)));
      return false;
    }
    s = connection.WriteSome(&request, &count);
  }
  if (s.ok()) return true;
  *failure = std::move(s);
  return false;
}

// Reads until the reader is done.
[[gnu::always_inline]] inline bool ReceiveReply(net::Connection& connection,
                                                net::ReplyReader& reader,
                                                net::Clock::time_point start,
                                                net::Deadline deadline, bool fresh,
                                                Status* failure) {
  // Right after a send that did not wait, the exchange is still at `start`: the
  // first read decides between a blocking recv and poll() with that reading.
  for (bool first = fresh; !reader.done(); first = false) {
    Status read = first ? connection.ReadMore(deadline, start) : connection.ReadMore(deadline);
    if (read.IsTimeout()) {
      *failure = NoReply(connection);
      return false;
    }
    if (!read.ok()) {
      *failure = std::move(read);
      return false;
    }
    Status consumed = reader.Consume(connection.buffer());
    if (!consumed.ok()) {
      *failure = std::move(consumed);
      return false;
    }
  }
  return true;
}

}  // namespace

Status RunSingleExchange(net::Connection& connection, iovec* request, int count,
                         net::ReplyReader& reader, net::Clock::time_point start,
                         net::Deadline deadline) {
  // Every path returns this one object, so it is built in the caller's place.
  Status outcome;
  bool waited = false;
  if (SendWhole(connection, request, count, deadline, &waited, &outcome) &&
      ReceiveReply(connection, reader, start, deadline, !waited, &outcome)) {
    return outcome;
  }
  connection.Close();
  return outcome;
}

}  // namespace cachet::memcached
