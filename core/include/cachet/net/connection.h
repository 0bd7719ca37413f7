// Connection: one TCP connection to one server, with deadlines.
//
// RAII and move-only: the socket closes with the object. Every wait is bounded by
// a deadline (a poll(), or the socket's own receive timeout of io_timeout for the
// first read after a request), so a stalled server costs at most the I/O timeout. Connecting can also be split in two (StartConnect, then
// ContinueConnect when the socket polls writable), so that FanOut connects to
// several servers at once instead of one after another. TCP_NODELAY is set because requests are small and latency
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

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  // Connects if not connected(), finishing a connect StartConnect began:
  // kUnavailable (refused, unresolvable) or kTimeout.
  Status EnsureConnected();

  // Connecting without waiting. StartConnect resolves the address and begins a
  // non-blocking connect: kOk when connected() already or when the connect is under
  // way (connecting()); an error when no address could even be tried. Once the
  // socket polls writable, ContinueConnect finishes it: kOk and connected(), or kOk
  // and connecting() again when that address failed and the next one the name
  // resolved to is being tried, or kUnavailable when none is left. Past
  // connect_deadline() the caller gives up (kTimeout) and closes.
  Status StartConnect();
  Status ContinueConnect();
  bool connecting() const noexcept { return connecting_; }
  Deadline connect_deadline() const noexcept { return connect_deadline_; }
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
  // Waits until something was read. kTimeout at `deadline` (early in an exchange,
  // when the socket's receive timeout ends by then, one blocking recv does both).
  Status ReadMore(Deadline deadline);
  // ReadMore for a caller that read the clock a moment ago (an exchange that has
  // just begun): `now` is that reading, so one exchange needs only one.
  Status ReadMore(Deadline deadline, Clock::time_point now);

  ReadBuffer& buffer() noexcept { return buffer_; }
  int fd() const noexcept { return fd_; }

  // "host:port: what went wrong".
  std::string Describe(std::string_view what) const;

 private:
  // One address the server's name resolved to.
  struct SocketAddress {
    sockaddr_storage storage;
    socklen_t length;
  };

  Status Connect();
  // Begins a connect to the next untried address of addresses_.
  Status TryNextAddress();
  Status Established();
  // One recv() that waits up to the socket's receive timeout (io_timeout); if a
  // signal interrupts it, the rest of the wait is poll()'s, up to `deadline`.
  Status ReadBlocking(Deadline deadline);
  // Waits for bytes with poll() up to `deadline`, then reads what came.
  Status PollThenRead(Deadline deadline);
  Status WaitFor(short events, Deadline deadline, std::string_view what);

  ServerAddress address_;
  ConnectionOptions options_;
  int fd_ = -1;
  pid_t owner_pid_ = 0;
  ReadBuffer buffer_;
  // The connect in progress: the addresses still to try and when to give up.
  bool connecting_ = false;
  std::vector<SocketAddress> addresses_;
  std::size_t next_address_ = 0;
  Deadline connect_deadline_{};
};

}  // namespace cachet::net
