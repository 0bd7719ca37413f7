// Connection: one TCP or Unix-domain connection to one server, with deadlines,
// in the clear or over TLS.
//
// RAII and move-only: the socket closes with the object. Two limits bound every
// wait: io_timeout, the longest the server may stay silent (each wait for bytes or
// for room to send ends io_timeout after it began, so a large value that keeps
// arriving is never cut off), and the caller's deadline, the end of the whole call
// (request_timeout after it began). A stalled server therefore costs at most the
// I/O timeout, and a call at most its request timeout. Connecting can also be
// split in two (StartConnect, then ContinueConnect each time the socket polls
// ready for ConnectEvents()), so that FanOut connects to several servers at
// once instead of one after another, TLS handshakes included. TCP_NODELAY is set because requests
// are small and latency matters. Writes gather several buffers with writev; reads land in a
// reusable ReadBuffer.
//
// A server written "unix:/path" (endpoint.h) is reached over that socket. With
// ConnectionOptions::tls set, the connect ends with a TLS handshake (within
// io_timeout, never past the caller's limit; a step of the connect, so
// several servers' handshakes run at once) and every byte then goes through
// OpenSSL: the same calls, the same deadlines (SSL_read's and SSL_write's
// "want read/write" are waited for with the same poll()), and reads still land
// where ReadBuffer says, a direct value's own string included. Plain
// connections pay one null-pointer test for it. Anything a TLS connection
// cannot account for (a record that is not a reply, an alert) closes it.
//
// Fork safety: a Connection remembers the process that opened it. In a forked
// child it reports itself closed (and closes only its own copy of the descriptor,
// never shutting the parent's connection down), so a child reconnects instead of
// interleaving bytes with its parent on one socket.
//
// Thread safety: none; a Connection is used by one thread at a time (ServerPool
// hands them out).
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/net/endpoint.h"
#include "cachet/net/read_buffer.h"
#include "cachet/status.h"

struct ssl_st;

namespace cachet::net {

class TlsContext;

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

struct ConnectionOptions {
  std::chrono::milliseconds connect_timeout{250};  // one connect
  std::chrono::milliseconds io_timeout{1000};      // the longest silence within a call
  // A whole call: connects, waits, retries; 0: three times io_timeout.
  std::chrono::milliseconds request_timeout{0};
  // The store's TLS context (tls.h); null: no TLS. Shared by every connection
  // of the store, and kept alive by them.
  std::shared_ptr<const TlsContext> tls{};

  // The bound of one call, request_timeout with its default worked out.
  std::chrono::milliseconds CallTimeout() const {
    return request_timeout.count() > 0 ? request_timeout : 3 * io_timeout;
  }
};

namespace detail {
// CurrentProcessId()'s cache: 0 until first asked, then refreshed in children.
CACHET_EXPORT extern std::atomic<pid_t> g_process_id;
// Fills the cache (and arranges its refresh after fork) on first use.
CACHET_EXPORT pid_t FirstProcessId() noexcept;
}  // namespace detail

// The current process id, cached and refreshed in forked children. Inline:
// every use of a connection asks, and the cached answer is one load.
inline pid_t CurrentProcessId() noexcept {
  const pid_t pid = detail::g_process_id.load(std::memory_order_relaxed);
  return pid != 0 ? pid : detail::FirstProcessId();
}

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

  // True when a socket is open and ready (its connect, and TLS handshake,
  // done) and was opened by this process.
  bool connected() const noexcept {
    return fd_ >= 0 && !connecting_ && owner_pid_ == CurrentProcessId();
  }
  // Connects if not connected(), finishing a connect StartConnect began:
  // kUnavailable (refused, unresolvable) or kTimeout (connect_timeout, or `limit`
  // when that comes first).
  Status EnsureConnected(Deadline limit = Deadline::max());

  // True when the connection may carry a new request: it is connected and
  // nothing arrived while it sat idle. Bytes that nobody asked for (a late or
  // extra reply) or the server's close (an idle timeout, a restart) make it
  // false; the caller then closes it. One poll() that does not wait, whose
  // usual answer (nothing happened) is not an error, as a peek's would be;
  // inline, since every pooled request asks. (A forked child's copy of a
  // socket may pass: connected() refuses it before it is used.)
  bool QuietSinceLastUse() {
    if (fd_ < 0 || !buffer_.empty()) return false;
    // Over TLS, bytes may be a session ticket rather than a reply.
    if (ssl_ != nullptr) return TlsQuietSinceLastUse();
    pollfd idle{fd_, POLLIN, 0};
    return ::poll(&idle, 1, 0) == 0;
  }
  // After QuietSinceLastUse() said no: whether bytes arrived (a reply nobody
  // asked for) rather than only the server's close. Cold; it reads nothing away.
  bool UnaskedBytesArrived();
  // QuietSinceLastUse() for an exchange that reads nothing back (memcached text
  // noreply writes only). Bytes waiting unread cannot be taken for its replies
  // (the next exchange that reads checks them), so the check is only there to
  // catch a close while the connection sat idle: it is skipped when another
  // such exchange took the connection under kBusyWindow before `now`, the
  // steady stream of a noreply loop, one system call less per write.
  bool QuietForWritesOnly(Clock::time_point now) {
    const bool busy = fd_ >= 0 && buffer_.empty() && now - last_writes_only_ < kBusyWindow;
    last_writes_only_ = now;
    return busy || QuietSinceLastUse();
  }
  // True when the connection served an earlier call before this one (it came
  // from the pool); false once it is connected anew.
  bool reused() const noexcept { return reused_; }
  void MarkReused() noexcept { reused_ = true; }
  // True when the server answered before it took the whole request (then hung
  // up, or not): the request was refused, the server is well (ExchangeState
  // marks it). Kept past Close(), until the next connect, as reused() is.
  bool refused_request() const noexcept { return refused_request_; }
  void MarkRefusedRequest() noexcept { refused_request_ = true; }

  // A stand-in the pool lends when every connection its bound allows stayed in
  // use until the call's deadline (ServerPool, max_connections): connecting
  // fails with `why`, and the failure says nothing about the server's health.
  void RefuseConnects(Status why) noexcept { refusal_ = std::move(why); }
  bool refused() const noexcept { return !refusal_.ok(); }

  // Connecting without waiting. StartConnect resolves the address and begins a
  // non-blocking connect: kOk when connected() already or when the connect is under
  // way (connecting()); an error when no address could even be tried. Each time
  // the socket polls ready for ConnectEvents(), ContinueConnect takes the next
  // step: kOk and connected(), or kOk and connecting() still (the TLS handshake
  // goes on, or that address failed and the next one the name resolved to is
  // being tried), or kUnavailable when none is left (or the handshake failed).
  // Past connect_deadline() (connect_timeout from the connect's start, then
  // io_timeout from the handshake's, never past `limit`) the caller gives up
  // (kTimeout) and closes.
  Status StartConnect(Deadline limit = Deadline::max());
  Status ContinueConnect();
  bool connecting() const noexcept { return connecting_; }
  // True while the connect is at its TLS handshake (connecting() too).
  bool handshaking() const noexcept { return handshaking_; }
  // The poll() events the connect waits for: POLLOUT for the TCP connect;
  // over TLS then what the handshake needs next.
  short ConnectEvents() const noexcept { return handshaking_ ? handshake_events_ : POLLOUT; }
  Deadline connect_deadline() const noexcept { return connect_deadline_; }
  // Closes the socket and forgets unread bytes; the next use reconnects.
  void Close() noexcept;

  // Now + the request timeout: the deadline of a call that begins now.
  Deadline CallDeadline() const { return Clock::now() + options_.CallTimeout(); }
  // The end of one wait for the server: io_timeout from now, or `deadline`.
  Deadline WaitEnd(Deadline deadline) const {
    return std::min(Clock::now() + options_.io_timeout, deadline);
  }

  // Writes every byte of every buffer before `deadline`, waiting for room at
  // most io_timeout at a time.
  Status WriteAll(std::span<const std::string_view> buffers, Deadline deadline);

  // One non-blocking writev: advances `*iov`/`*count` past what was sent.
  // kOk with *count == 0 when all was sent; kOk with bytes left when the socket
  // is full (wait for POLLOUT); an error when the connection failed. Inline for
  // one piece (most requests): one send(), no message header nor walk over pieces.
  Status WriteSome(iovec** iov, int* count) {
    return *count == 1 ? WriteOnePiece(iov, count) : WritePieces(iov, count);
  }
  // WriteSome() of one piece, with one send(): advances `*rest` past what was
  // sent. Inline: a single operation's request is nearly always taken whole.
  Status WriteSome(std::string_view* rest) {
    if (ssl_ != nullptr) return TlsWrite(rest);
    const ssize_t sent = ::send(fd_, rest->data(), rest->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) return SendFailed();
    rest->remove_prefix(static_cast<std::size_t>(sent));
    return Status::OK();
  }
  // One non-blocking read into buffer(): kOk (maybe nothing read, if none was
  // ready), kIoError when the peer closed or failed.
  Status ReadSome();
  // Waits until something was read: kTimeout after io_timeout of silence, or at
  // `deadline` (the call's end) if that comes first. While the call's end is
  // further away than io_timeout, one blocking recv does it (the socket's own
  // receive timeout is io_timeout).
  Status ReadMore(Deadline deadline);
  // The protocol error of bytes left in buffer() after the last reply an
  // exchange expected: nobody's answer, so the connection is not reused.
  Status LeftoverError() const;
  // ReadMore for a caller that read the clock a moment ago (an exchange that has
  // just begun): `now` is that reading, so one exchange needs only one.
  // Inline, as the blocking read's usual case: one exchange's read is one recv.
  Status ReadMore(Deadline deadline, Clock::time_point now) {
    if (ssl_ != nullptr) return TlsReadMore(deadline, now);
    // The kernel's receive timeout is io_timeout: a blocking recv may wait that
    // long, which is within the deadline (give or take kBlockingSlack) only early
    // in an exchange. Later, or for a shorter deadline, poll() keeps it exact. A
    // zero io_timeout would be no receive timeout at all, so it always polls.
    if (options_.io_timeout.count() > 0 && now + options_.io_timeout <= deadline + kBlockingSlack) {
      return ReadBlocking(deadline);
    }
    return PollThenRead(deadline);
  }

  // The poll() events the next read, or write, waits for: POLLIN and POLLOUT,
  // except over TLS after an operation OpenSSL could not finish without the
  // other direction (a read that must send a handshake message, a write that
  // must first receive one). A poll loop waits for these (ExchangeState::Events).
  short ReadEvents() const noexcept { return read_events_; }
  short WriteEvents() const noexcept { return write_events_; }

  ReadBuffer& buffer() noexcept { return buffer_; }
  const ReadBuffer& buffer() const noexcept { return buffer_; }
  int fd() const noexcept { return fd_; }
  // True when the connection runs TLS (its handshake is done).
  bool tls() const noexcept { return ssl_ != nullptr; }
  // True when its TLS session was resumed rather than negotiated anew.
  bool tls_resumed() const noexcept;
  // How often, over this object's life, a TLS read had to wait for room to
  // send first (OpenSSL's own key update or handshake message was stuck in a
  // full socket) and a TLS write for bytes to arrive first (the rest of a
  // handshake message from the server). Rare; tests read them.
  struct TlsCrossedWaits {
    std::uint32_t read_wanted_write = 0;
    std::uint32_t write_wanted_read = 0;
  };
  const TlsCrossedWaits& tls_crossed_waits() const noexcept { return tls_crossed_; }

  // "host:port: what went wrong".
  std::string Describe(std::string_view what) const;
  // The timeout of a TLS handshake that did not end in time.
  Status HandshakeTimeout() const;

 private:
  // One address the server's name resolved to.
  struct SocketAddress {
    sockaddr_storage storage;
    socklen_t length;
  };

  Status Connect(Deadline limit);
  // Begins a connect to the next untried address of addresses_.
  Status TryNextAddress();
  Status Established();
  // Reads want room for a good chunk: large values arrive in few syscalls.
  static constexpr std::size_t kReadChunk = 64 * 1024;
  // How far a blocking read may overrun an exchange's deadline: ReadMore blocks
  // in recv() only while the socket's io_timeout ends at most this long after it.
  static constexpr std::chrono::milliseconds kBlockingSlack{5};
  // QuietForWritesOnly(): how recent the last write-only exchange must be for
  // the next one to skip the check. Short next to any idle close (memcached's
  // idle_timeout is in seconds); a server that dies inside it loses noreply
  // writes either way, as it does those already sent.
  static constexpr std::chrono::milliseconds kBusyWindow{1};

  // A failed send(), from its errno: ok when the socket was only full (or the
  // call interrupted), so the caller waits for room; kIoError otherwise.
  Status SendFailed() const;
  // WriteSome() of one iovec, through the one-piece WriteSome().
  Status WriteOnePiece(iovec** iov, int* count) {
    std::string_view rest(static_cast<const char*>((*iov)->iov_base), (*iov)->iov_len);
    Status s = WriteSome(&rest);
    if (rest.empty()) {
      ++*iov;
      *count = 0;
    } else {
      (*iov)->iov_base = const_cast<char*>(rest.data());
      (*iov)->iov_len = rest.size();
    }
    return s;
  }
  // WriteSome() of several pieces, with sendmsg().
  Status WritePieces(iovec** iov, int* count);
  // One recv() that waits up to the socket's receive timeout (io_timeout); if a
  // signal interrupts it, the rest of the wait is poll()'s, up to `deadline`.
  Status ReadBlocking(Deadline deadline) {
    char* dest = buffer_.PrepareWrite(kReadChunk);
    const ssize_t got = ::recv(fd_, dest, buffer_.writable(), 0);
    if (got <= 0) return ReadBlockingFailed(got, deadline);
    buffer_.Commit(static_cast<std::size_t>(got));
    return Status::OK();
  }
  // ReadBlocking() after a recv() that returned `got` <= 0.
  Status ReadBlockingFailed(ssize_t got, Deadline deadline);
  // Waits for bytes with poll() for io_timeout, never past `deadline`, then
  // reads what came.
  Status PollThenRead(Deadline deadline);
  Status WaitFor(short events, Deadline deadline, std::string_view what);

  // TLS (connection_tls.cpp). The handshake, once the socket is connected:
  // StartHandshake begins it (done within io_timeout, never past the connect's
  // limit) and takes its first step; ContinueHandshake takes the next one.
  Status StartHandshake();
  Status ContinueHandshake();
  // QuietSinceLastUse() over TLS: a peek, which tells bytes from a close, then TlsQuiet().
  bool TlsQuietSinceLastUse();
  // QuietSinceLastUse() over TLS, from the peek's outcome (neither: the server
  // closed). True when nothing but TLS housekeeping (a session ticket) arrived.
  bool TlsQuiet(bool socket_silent, bool socket_has_bytes);
  Status TlsWrite(std::string_view* rest);
  Status TlsWritePieces(iovec** iov, int* count);
  // The bytes of the next TLS record of `count` pieces at `iov`: the first
  // piece, or small pieces gathered into tls_gather_ (connection_tls.cpp).
  std::string_view TlsRecordAt(const iovec* iov, int count);
  Status TlsReadSome();
  Status TlsReadMore(Deadline deadline, Clock::time_point now);
  // One SSL_read into buffer() (its first receive blocking if
  // tls::SetBlockingReads said so), then what OpenSSL still holds: kOk with *want 0
  // when bytes came; kOk with *want POLLIN/POLLOUT when it must wait; an
  // error when the connection failed.
  Status TlsRead(short* want);
  // The error of a failed TLS operation (`what`: "read", "write", "handshake").
  Status TlsFailure(int ret, std::string_view what);

  ServerAddress address_;
  ConnectionOptions options_;
  int fd_ = -1;
  pid_t owner_pid_ = 0;
  ReadBuffer buffer_;
  bool reused_ = false;
  bool refused_request_ = false;
  // The connect in progress: the addresses still to try and when to give up.
  bool connecting_ = false;
  std::vector<SocketAddress> addresses_;
  std::size_t next_address_ = 0;
  Deadline connect_deadline_{};
  // The limit StartConnect was given: the handshake never runs past it.
  Deadline connect_limit_ = Deadline::max();
  // The TLS handshake in progress (within connecting_), and what it waits for.
  bool handshaking_ = false;
  short handshake_events_ = POLLOUT;
  // The TLS session over fd_, owned (SSL_free); null on plain connections.
  ssl_st* ssl_ = nullptr;
  // Where partial TLS writes of several pieces are gathered into one record.
  std::string tls_gather_;
  // What the last TLS read and write wait for (ReadEvents, WriteEvents).
  short read_events_ = POLLIN;
  short write_events_ = POLLOUT;
  TlsCrossedWaits tls_crossed_;  // kept across reconnects: the object's whole life
  // When a write-only exchange last took this socket (QuietForWritesOnly);
  // the clock's epoch (long ago) once the socket closes.
  Clock::time_point last_writes_only_ = Clock::time_point{};
  Status refusal_;  // RefuseConnects(): what connecting answers instead
};

}  // namespace cachet::net
