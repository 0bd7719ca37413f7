// FanOut: request/reply exchanges with several servers at once.
//
// A batch that touches several servers is written to all of them first and their
// replies are read as they arrive, in one poll() loop: the slowest server sets
// the pace, not the sum of all. Writing and reading interleave, so a large
// pipeline never deadlocks against a server whose replies fill the socket.
// The protocol is the ReplyReader's business: it consumes complete replies from
// the connection's buffer (no I/O of its own) and says when all have arrived.
// Each exchange is an ExchangeState (exchange.h) stepped by this loop; a lone
// exchange past its connect is handed to the lone driver (DriveAlone).
//
// Over TLS each connection is polled for the event it needs next (an SSL read
// may have to write first, a write to read: ExchangeState::Events), and a
// connect's TLS handshake is a step of the loop too (Connection::ConnectEvents,
// ContinueConnect): every server's connect and handshake run at once.
//
// On any failure (connect, timeout, I/O, the reader's protocol error, bytes left
// over after the last reply the reader expected) that exchange's connection is
// closed, its status says why, and the other exchanges carry on. Not thread-safe per exchange;
// different threads run their own.
#pragma once

#include <sys/uio.h>

#include <span>
#include <vector>

#include "cachet/export.h"
#include "cachet/net/connection.h"
#include "cachet/net/read_buffer.h"
#include "cachet/status.h"

namespace cachet::net {

class CACHET_EXPORT ReplyReader {
 public:
  virtual ~ReplyReader();
  // Consumes every complete reply at the front of `buffer`. An error Status
  // (for example kProtocolError) ends the exchange and drops the connection.
  virtual Status Consume(ReadBuffer& buffer) = 0;
  // True when no more replies are expected.
  virtual bool done() const noexcept = 0;
};

struct Exchange {
  Connection* connection = nullptr;  // borrowed; connected by RunExchanges if needed
  std::vector<iovec> request;        // borrowed bytes, sent in order
  ReplyReader* reader = nullptr;     // borrowed
  Status status;                     // set by RunExchanges: ok or why it failed
};

// Runs every exchange to completion or until `deadline` (the call's end, see
// ConnectionOptions::request_timeout). An exchange whose server stays silent
// for its connection's io_timeout (connect_timeout while connecting) times out
// sooner; one that keeps receiving runs on until `deadline`, never past it.
CACHET_EXPORT void RunExchanges(std::span<Exchange> exchanges, Deadline deadline);

}  // namespace cachet::net
