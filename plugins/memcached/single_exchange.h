// RunSingleExchange: one request and its reply on one connected connection.
//
// What FanOut does for a lone exchange (fan_out.h), without the bookkeeping it
// needs for several at once: the request is sent whole (nearly always one
// sendmsg), then the reply is awaited with Connection::ReadMore, one blocking
// recv while the I/O timeout allows it. The same outcomes and messages as
// FanOut: a stalled server is a timeout saying "no reply within the I/O
// timeout"; any failure closes the connection.
#pragma once

#include <sys/uio.h>

#include "cachet/net/connection.h"
#include "cachet/net/fan_out.h"
#include "cachet/status.h"

namespace cachet::memcached {

// REQUIRES: connection.connected(). `request` holds `count` pieces, which are
// advanced as they are sent. `start` is the clock reading `deadline` was computed
// from, just before the call (one reading serves the whole exchange). Returns ok
// once `reader` is done.
Status RunSingleExchange(net::Connection& connection, iovec* request, int count,
                         net::ReplyReader& reader, net::Clock::time_point start,
                         net::Deadline deadline);

}  // namespace cachet::memcached
