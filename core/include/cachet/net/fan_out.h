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
// ContinueConnect): every server's connect and handshake run at once. So is a
// store's login on a connection connected anew (ConnectionSetup): its own
// request and replies, before the exchange's request goes out.
//
// On any failure (connect, timeout, I/O, the reader's protocol error, bytes left
// over after the last reply the reader expected) that exchange's connection is
// closed, its status says why, and the other exchanges carry on. Not thread-safe per exchange;
// different threads run their own.
#pragma once

#include <sys/uio.h>

#include <memory>
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

// The login a store runs on a connection connected anew, before its first
// request (AUTH, SELECT...): a request, and the reader of its replies, whose
// error (a refused password) ends the exchange and closes the connection.
class CACHET_EXPORT Login : public ReplyReader {
 public:
  // The request's pieces (*count of them), the login's own: the exchange
  // advances them as it sends, and they stay put until the login is destroyed.
  virtual iovec* Request(int* count) = 0;
};

// What a store needs on each connection it did not use before (a login, a
// database select): RunExchanges asks for it when it connects anew, and runs
// it as the first step of the exchange, so every server's connect, TLS
// handshake and login run at once. Shared by every thread: const.
class CACHET_EXPORT ConnectionSetup {
 public:
  virtual ~ConnectionSetup();
  // The login for `connection` (connected anew), or null when none is needed.
  virtual std::unique_ptr<Login> NewLogin(const Connection& connection) const = 0;
};

struct Exchange {
  Connection* connection = nullptr;  // borrowed; connected by RunExchanges if needed
  std::vector<iovec> request;        // borrowed bytes, sent in order
  ReplyReader* reader = nullptr;     // borrowed
  Status status;                     // set by RunExchanges: ok or why it failed
  // Set by RunExchanges: the request began to go out. False when the connect,
  // its handshake or the login failed first: the server cannot have run it.
  bool sent = false;
  // Borrowed; when set, its login runs first if `connection` connects anew.
  const ConnectionSetup* setup = nullptr;
};

// Runs every exchange to completion or until `deadline` (the call's end, see
// ConnectionOptions::request_timeout). An exchange whose server stays silent
// for its connection's io_timeout (connect_timeout while connecting) times out
// sooner; one that keeps receiving runs on until `deadline`, never past it.
CACHET_EXPORT void RunExchanges(std::span<Exchange> exchanges, Deadline deadline);

}  // namespace cachet::net
