// Connection: one TCP connection to one server, with deadlines.
//
// RAII and move-only: the socket closes with the object. Sockets are non-blocking;
// every wait is a poll() bounded by a deadline, so a stalled server costs at most
// the I/O timeout. TCP_NODELAY is set because requests are small and latency
// matters. Writes gather several buffers with writev; reads land in a reusable
// ReadBuffer.
//
// Fork safety: a Connection remembers the process that opened it. In a forked
// child it reports itself closed (and closes only its own copy of the descriptor,
// never shutting the parent's connection down), so a child reconnects instead of
// interleaving bytes with its parent on one socket.
//
// Thread safety: none; a Connection is used by one thread at a time (ServerPool
// hands them out).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "cachet/export.h"
#include "cachet/net/endpoint.h"
#include "cachet/net/read_buffer.h"
#include "cachet/status.h"

namespace cachet::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

struct ConnectionOptions {
  std::chrono::milliseconds connect_timeout{250};
  std::chrono::milliseconds io_timeout{1000};
};

// The current process id, cached and refreshed in forked children.
CACHET_EXPORT pid_t CurrentProcessId() noexcept;

class CACHET_EXPORT Connection {
 public:
  Connection(ServerAddress address, ConnectionOptions options);
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  const ServerAddress& address() const noexcept { return address_; }
  const ConnectionOptions& options() const noexcept { return options_; }

  // True when a socket is open and was opened by this process.
  bool connected() const noexcept { return fd_ >= 0 && owner_pid_ == CurrentProcessId(); }
  // Connects if not connected(): kUnavailable (refused, unresolvable) or kTimeout.
  Status EnsureConnected();
  // Closes the socket and forgets unread bytes; the next use reconnects.
  void Close() noexcept;

  // Now + the I/O timeout: the deadline of one request/reply exchange.
  Deadline IoDeadline() const { return Clock::now() + options_.io_timeout; }

  // Writes every byte of every buffer before `deadline`.
  Status WriteAll(std::span<const std::string_view> buffers, Deadline deadline);

  // One non-blocking writev: advances `*iov`/`*count` past what was sent.
  // kOk with *count == 0 when all was sent; kOk with bytes left when the socket
  // is full (wait for POLLOUT); an error when the connection failed.
  Status WriteSome(iovec** iov, int* count);
  // One non-blocking read into buffer(): kOk (maybe nothing read, if none was
  // ready), kIoError when the peer closed or failed.
  Status ReadSome();
  // Waits until readable, then ReadSome(). kTimeout at `deadline`.
  Status ReadMore(Deadline deadline);

  ReadBuffer& buffer() noexcept { return buffer_; }
  int fd() const noexcept { return fd_; }

  // "host:port: what went wrong".
  std::string Describe(std::string_view what) const;

 private:
  Status Connect();
  Status WaitFor(short events, Deadline deadline, std::string_view what);

  ServerAddress address_;
  ConnectionOptions options_;
  int fd_ = -1;
  pid_t owner_pid_ = 0;
  ReadBuffer buffer_;
};

}  // namespace cachet::net
