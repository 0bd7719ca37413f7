// RunSingleExchange: one request and its reply on one connected connection.
//
// What FanOut does for a lone exchange (fan_out.h), without the bookkeeping it
// needs for several at once: the request is sent whole (nearly always one
// send), then the reply is awaited with Connection::ReadMore, one blocking recv
// while the I/O timeout allows it. The same outcomes and messages as FanOut: a
// stalled server is a timeout saying "no reply within the I/O timeout"; any
// failure closes the connection.
//
// A template over the reader's type, so the usual reply is read without a
// virtual call; waiting for room to send and wording failures are out of line.
#pragma once

#include <sys/uio.h>

#include <string_view>
#include <utility>

#include "cachet/net/connection.h"
#include "cachet/status.h"

namespace cachet::memcached {

namespace single_exchange_detail {

// Sends what the first send left, waiting for room until `deadline`; *waited
// says whether it had to.
Status SendRest(net::Connection& connection, iovec* request, int count, net::Deadline deadline,
                bool* waited);

// The failure of a read: a timeout says whether the server was silent for
// io_timeout or the call's `deadline` ran out.
Status ReadFailure(const net::Connection& connection, Status read, net::Deadline deadline);

// Reads until `reader` is done; `fresh` while the exchange is still at `start`.
// always_inline, as RunSingleExchange below.
template <class Reader>
[[gnu::always_inline]] inline Status ReadReply(net::Connection& connection, Reader& reader,
                                               bool fresh, net::Clock::time_point start,
                                               net::Deadline deadline) {
  for (; !reader.done(); fresh = false) {
    Status read = fresh ? connection.ReadMore(deadline, start) : connection.ReadMore(deadline);
    if (!read.ok()) return ReadFailure(connection, std::move(read), deadline);
    if (Status consumed = reader.Consume(connection.buffer()); !consumed.ok()) return consumed;
  }
  // Bytes after the reply are nobody's answer: the connection is not reused.
  if (!connection.buffer().empty()) return connection.LeftoverError();
  return Status::OK();
}

}  // namespace single_exchange_detail

// REQUIRES: connection.connected(). `request` holds `count` pieces, which are
// advanced as they are sent. `start` is the clock reading `deadline` (the call's
// end) was computed from, just before the call (one reading serves the whole
// exchange). Each wait for the server ends after the connection's io_timeout of
// silence, or at `deadline`. `reader` has Consume(ReadBuffer&) and done(), as a
// net::ReplyReader. Returns ok once `reader` is done; any failure closes the
// connection. always_inline: GCC otherwise calls it out of line from RunOne
// (docs/performance.md).
template <class Reader>
[[gnu::always_inline]] inline Status RunSingleExchange(net::Connection& connection, iovec* request,
                                                       int count, Reader& reader,
                                                       net::Clock::time_point start,
                                                       net::Deadline deadline) {
  // The usual request is one piece, which the socket takes at once.
  Status sent = connection.WriteSome(&request, &count);
  bool waited = false;
  if (sent.ok() && count > 0) {
    sent = single_exchange_detail::SendRest(connection, request, count, deadline, &waited);
  }
  if (!sent.ok()) {
    connection.Close();
    return sent;
  }
  // Right after a send that did not wait, the exchange is still at `start`: the
  // first read decides between a blocking recv and poll() with that reading.
  Status read = single_exchange_detail::ReadReply(connection, reader, !waited, start, deadline);
  if (!read.ok()) connection.Close();
  return read;
}

}  // namespace cachet::memcached
