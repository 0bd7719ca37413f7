// RunSingleExchange: one request and its reply on one connected connection.
//
// What FanOut does for a lone exchange (fan_out.h), without the bookkeeping it
// needs for several at once: the request is sent whole (nearly always one
// send), then the reply is awaited with Connection::ReadMore, one blocking recv
// while the I/O timeout allows it. The same outcomes and messages as FanOut: a
// stalled server is a timeout saying "no reply within the I/O timeout"; any
// failure closes the connection.
//
// Inline, over the reader's own type: the usual exchange, one send, one recv and
// a reply read whole, is then one function with no Status built but the
// outcome. Waiting for room to send, and every failure, are out of line.
#pragma once

#include <sys/uio.h>

#include <string_view>
#include <utility>

#include "cachet/net/connection.h"
#include "cachet/status.h"

namespace cachet::memcached {

namespace single_exchange_detail {

// Sends what the first send left, waiting for room until `deadline`; *waited
// says whether it had to. False (and *failure says why) if that failed.
bool SendRest(net::Connection& connection, iovec* request, int count, net::Deadline deadline,
              bool* waited, Status* failure);

// The failure of a read: a timeout says whether the server was silent for
// io_timeout or the call's `deadline` ran out.
Status ReadFailure(const net::Connection& connection, Status read, net::Deadline deadline);

}  // namespace single_exchange_detail

// REQUIRES: connection.connected(). `request` holds `count` pieces, which are
// advanced as they are sent. `start` is the clock reading `deadline` (the call's
// end) was computed from, just before the call (one reading serves the whole
// exchange). Each wait for the server ends after the connection's io_timeout of
// silence, or at `deadline`. `reader`
// has Consume(ReadBuffer&) and done(), as a net::ReplyReader. Returns ok once
// `reader` is done.
template <class Reader>
[[gnu::always_inline]] inline Status RunSingleExchange(net::Connection& connection, iovec* request,
                                                       int count, Reader& reader,
                                                       net::Clock::time_point start,
                                                       net::Deadline deadline) {
  // Every path returns this one object, so it is built in the caller's place.
  Status outcome;
  // The usual request is one piece, which the socket takes at once.
  Status written = connection.WriteSome(&request, &count);
  if (!written.ok()) {
    outcome = std::move(written);
    connection.Close();
    return outcome;
  }
  bool waited = false;
  if (count > 0 &&
      !single_exchange_detail::SendRest(connection, request, count, deadline, &waited, &outcome)) {
    connection.Close();
    return outcome;
  }
  // Right after a send that did not wait, the exchange is still at `start`: the
  // first read decides between a blocking recv and poll() with that reading.
  for (bool fresh = !waited; !reader.done(); fresh = false) {
    Status read = fresh ? connection.ReadMore(deadline, start) : connection.ReadMore(deadline);
    if (!read.ok()) {
      outcome = single_exchange_detail::ReadFailure(connection, std::move(read), deadline);
      break;
    }
    Status consumed = reader.Consume(connection.buffer());
    if (!consumed.ok()) {
      outcome = std::move(consumed);
      break;
    }
  }
  // Bytes after the reply are nobody's answer: the connection is not reused.
  if (outcome.ok() && !connection.buffer().empty()) outcome = connection.LeftoverError();
  if (!outcome.ok()) connection.Close();
  return outcome;
}

}  // namespace cachet::memcached
