// Connection: TCP with poll() deadlines, sendmsg gathering and fork detection.
//
// The socket connects non-blocking and is then switched to blocking mode with a
// kernel receive timeout of io_timeout: every send and every read that must not
// wait says so with MSG_DONTWAIT, and a read that may wait (ReadMore right after
// a request went out) is one blocking recv() instead of poll() and recv(), one
// system call less per round trip. A Unix-domain server is the same socket of
// another family; TLS sits on top (connection_tls.cpp).
#include "cachet/net/connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "cachet/net/poll_timeout.h"
#include "name_lookup.h"

namespace cachet::net {

std::atomic<pid_t> detail::g_process_id{0};

int MillisUntil(Deadline deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT_MAX));
}

namespace {

void RefreshProcessId() { detail::g_process_id.store(getpid(), std::memory_order_relaxed); }

std::string HostForResolver(const std::string& host) {
  // "[::1]" is the configured spelling; the resolver wants "::1".
  if (host.size() > 2 && host.front() == '[') return host.substr(1, host.size() - 2);
  return host;
}

}  // namespace

pid_t detail::FirstProcessId() noexcept {
  // The child handler keeps the cache right after fork(), so a hot-path check
  // costs a load instead of a getpid() system call.
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, &RefreshProcessId);
    return true;
  }();
  (void)registered;
  RefreshProcessId();
  return detail::g_process_id.load(std::memory_order_relaxed);
}

Connection::Connection(ServerAddress address, ConnectionOptions options)
    : address_(std::move(address)), options_(options) {}

Connection::Connection(Connection&& other) noexcept
    : address_(std::move(other.address_)),
      options_(other.options_),
      fd_(std::exchange(other.fd_, -1)),
      owner_pid_(other.owner_pid_),
      buffer_(std::move(other.buffer_)),
      reused_(other.reused_),
      refused_request_(other.refused_request_),
      connecting_(std::exchange(other.connecting_, false)),
      addresses_(std::move(other.addresses_)),
      next_address_(std::exchange(other.next_address_, 0)),
      connect_deadline_(other.connect_deadline_),
      connect_limit_(other.connect_limit_),
      handshaking_(std::exchange(other.handshaking_, false)),
      handshake_events_(other.handshake_events_),
      ssl_(std::exchange(other.ssl_, nullptr)),
      read_events_(std::exchange(other.read_events_, POLLIN)),
      write_events_(std::exchange(other.write_events_, POLLOUT)),
      tls_crossed_(other.tls_crossed_),
      last_writes_only_(std::exchange(other.last_writes_only_, Clock::time_point{})),
      refusal_(std::move(other.refusal_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    Close();
    address_ = std::move(other.address_);
    options_ = other.options_;
    fd_ = std::exchange(other.fd_, -1);
    owner_pid_ = other.owner_pid_;
    buffer_ = std::move(other.buffer_);
    reused_ = other.reused_;
    refused_request_ = other.refused_request_;
    connecting_ = std::exchange(other.connecting_, false);
    addresses_ = std::move(other.addresses_);
    next_address_ = std::exchange(other.next_address_, 0);
    connect_deadline_ = other.connect_deadline_;
    connect_limit_ = other.connect_limit_;
    handshaking_ = std::exchange(other.handshaking_, false);
    handshake_events_ = other.handshake_events_;
    ssl_ = std::exchange(other.ssl_, nullptr);
    read_events_ = std::exchange(other.read_events_, POLLIN);
    write_events_ = std::exchange(other.write_events_, POLLOUT);
    tls_crossed_ = other.tls_crossed_;
    last_writes_only_ = std::exchange(other.last_writes_only_, Clock::time_point{});
    refusal_ = std::move(other.refusal_);
  }
  return *this;
}

Connection::~Connection() { Close(); }

void Connection::Close() noexcept {
  // close() only, never shutdown() nor a TLS close_notify: in a forked child
  // the descriptor is a copy and the parent's connection must stay intact.
  if (ssl_ != nullptr) {
    // Marked as shut down (nothing is sent), or SSL_free would make the
    // server's session unresumable for the next connection.
    if (SSL_is_init_finished(ssl_)) SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN);
    SSL_free(ssl_);
  }
  ssl_ = nullptr;
  read_events_ = POLLIN;
  write_events_ = POLLOUT;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.Clear();
  last_writes_only_ = Clock::time_point{};
  connecting_ = false;
  handshaking_ = false;
  addresses_.clear();
  next_address_ = 0;
}

bool Connection::UnaskedBytesArrived() {
  if (!buffer_.empty()) return true;
  if (fd_ < 0) return false;
  // Over TLS the idle check peeked: the data it met is still OpenSSL's to read
  // (a close_notify or a session ticket leaves none).
  if (ssl_ != nullptr) return SSL_pending(ssl_) > 0;
  char byte;
  return ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

std::string Connection::Describe(std::string_view what) const {
  return address_.HostPort() + ": " + std::string(what);
}

Status Connection::LeftoverError() const {
  return Status::ProtocolError(
      Describe(std::to_string(buffer_.size()) + " bytes after the last reply, unasked for"));
}

Status Connection::EnsureConnected(Deadline limit) {
  if (connected()) return Status::OK();
  return Connect(limit);
}

Status AwaitEvents(const Connection& connection, short events, Deadline until,
                   std::string_view what, short* revents) {
  pollfd pfd{connection.fd(), events, 0};
  // Bounded: each pass either returns or was interrupted by a signal.
  for (;;) {
    const int rc = ::poll(&pfd, 1, MillisUntil(until));
    if (rc > 0) {
      if (revents != nullptr) *revents = pfd.revents;
      return Status::OK();
    }
    if (rc == 0) return Status::Timeout(connection.Describe(std::string(what) + " timed out"));
    if (errno != EINTR) {
      return Status::IoError(connection.Describe(std::string("poll: ") + strerror(errno)));
    }
  }
}

Status Connection::WaitFor(short events, Deadline deadline, std::string_view what) {
  return AwaitEvents(*this, events, deadline, what);
}

// Finishes a connect already under way (StartConnect), or makes one.
Status Connection::Connect(Deadline limit) {
  Status s = connecting_ ? Status::OK() : StartConnect(limit);
  while (s.ok() && connecting()) {
    s = WaitFor(ConnectEvents(), connect_deadline_, handshaking_ ? "TLS handshake" : "connect");
    if (s.ok()) {
      s = ContinueConnect();
    } else if (s.IsTimeout() && handshaking_) {
      s = HandshakeTimeout();
    }
  }
  if (!s.ok()) Close();
  return s;
}

Status Connection::StartConnect(Deadline limit) {
  if (connected() || connecting_) return Status::OK();
  if (refused()) [[unlikely]]
    return refusal_;
  Close();
  connect_limit_ = limit;
  if (address_.IsUnix()) {
    // The path's length was checked when the address was parsed.
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    const std::string_view path = address_.UnixPath();
    std::memcpy(un.sun_path, path.data(), std::min(path.size(), sizeof(un.sun_path) - 1));
    SocketAddress address{};
    std::memcpy(&address.storage, &un, sizeof(un));
    address.length = sizeof(un);
    addresses_.push_back(address);
    connect_deadline_ = std::min(Clock::now() + options_.connect_timeout, limit);
    return TryNextAddress();
  }
  // The name lookup is part of the connect: both within connect_timeout.
  connect_deadline_ = std::min(Clock::now() + options_.connect_timeout, limit);
  const LookupResult found =
      LookUpAddresses(HostForResolver(address_.host), address_.port, connect_deadline_);
  if (found.timed_out) return Status::Timeout(Describe("resolve: no answer in time"));
  if (found.error != 0) {
    return Status::Unavailable(Describe(std::string("resolve: ") + gai_strerror(found.error)));
  }
  for (const addrinfo* ai = found.addresses.get(); ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_addrlen > sizeof(sockaddr_storage)) continue;
    SocketAddress address{};
    std::memcpy(&address.storage, ai->ai_addr, ai->ai_addrlen);
    address.length = ai->ai_addrlen;
    addresses_.push_back(address);
  }
  return TryNextAddress();
}

Status Connection::TryNextAddress() {
  Status last = Status::Unavailable(Describe("no address"));
  while (next_address_ < addresses_.size()) {
    const SocketAddress& address = addresses_[next_address_++];
    const auto* sa = reinterpret_cast<const sockaddr*>(&address.storage);
    fd_ = ::socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      last = Status::IoError(Describe(std::string("socket: ") + strerror(errno)));
      continue;
    }
    int rc = ::connect(fd_, sa, address.length);
    // A Unix server whose accept queue is full refuses at once (EAGAIN) where
    // TCP would wait: wait here, in short naps, within connect_timeout.
    for (auto nap = std::chrono::milliseconds(1);
         rc != 0 && errno == EAGAIN && sa->sa_family == AF_UNIX &&
         Clock::now() + nap < connect_deadline_;
         nap = std::min(nap * 2, std::chrono::milliseconds(16))) {
      std::this_thread::sleep_for(nap);
      rc = ::connect(fd_, sa, address.length);
    }
    if (rc == 0) return Established();
    if (errno == EINPROGRESS) {
      connecting_ = true;
      return Status::OK();
    }
    if (errno == EAGAIN && sa->sa_family == AF_UNIX) {
      last = Status::Timeout(Describe("connect timed out (the server's accept queue stayed full)"));
      ::close(fd_);
      fd_ = -1;
      continue;
    }
    last = Status::Unavailable(Describe(std::string("connect: ") + strerror(errno)));
    ::close(fd_);
    fd_ = -1;
  }
  return last;
}

Status Connection::ContinueConnect() {
  if (!connecting_) {
    return connected() ? Status::OK() : Status::Unavailable(Describe("not connecting"));
  }
  if (handshaking_) return ContinueHandshake();
  int error = 0;
  socklen_t len = sizeof(error);
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
  if (error == 0) return Established();
  Status failed = Status::Unavailable(Describe(std::string("connect: ") + strerror(error)));
  ::close(fd_);
  fd_ = -1;
  connecting_ = false;
  if (next_address_ >= addresses_.size()) return failed;
  Status next = TryNextAddress();
  return next.ok() ? next : failed;
}

Status Connection::Established() {
  reused_ = false;
  refused_request_ = false;
  addresses_.clear();
  next_address_ = 0;
  int one = 1;
  if (!address_.IsUnix()) setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(options_.io_timeout);
  timeval receive_timeout{static_cast<time_t>(usec.count() / 1000000),
                          static_cast<suseconds_t>(usec.count() % 1000000)};
  const int flags = fcntl(fd_, F_GETFL);
  if (flags < 0 || fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &receive_timeout, sizeof(receive_timeout)) != 0) {
    Status failed = Status::IoError(Describe(std::string("socket setup: ") + strerror(errno)));
    Close();
    return failed;
  }
  owner_pid_ = CurrentProcessId();
  if (options_.tls != nullptr) return StartHandshake();  // connecting() until it is done
  connecting_ = false;
  return Status::OK();
}

Status Connection::SendFailed() const {
  if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return Status::OK();
  return Status::IoError(Describe(std::string("send: ") + strerror(errno)));
}

Status Connection::WritePieces(iovec** iov, int* count) {
  if (ssl_ != nullptr) return TlsWritePieces(iov, count);
  while (*count > 0) {
    msghdr msg{};
    msg.msg_iov = *iov;
    msg.msg_iovlen = static_cast<std::size_t>(std::min(*count, IOV_MAX));
    // sendmsg instead of writev: MSG_NOSIGNAL turns a dead peer into EPIPE, not SIGPIPE.
    ssize_t sent = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return SendFailed();  // ok when the socket is only full
    }
    auto left = static_cast<std::size_t>(sent);
    while (*count > 0 && left >= (*iov)->iov_len) {
      left -= (*iov)->iov_len;
      ++*iov;
      --*count;
    }
    if (*count > 0) {
      (*iov)->iov_base = static_cast<char*>((*iov)->iov_base) + left;
      (*iov)->iov_len -= left;
    }
  }
  return Status::OK();
}

Status Connection::WriteAll(std::span<const std::string_view> buffers, Deadline deadline) {
  std::vector<iovec> iovs;
  iovs.reserve(buffers.size());
  for (std::string_view b : buffers) {
    iovs.push_back({const_cast<char*>(b.data()), b.size()});
  }
  iovec* iov = iovs.data();
  int count = static_cast<int>(iovs.size());
  for (;;) {
    Status s = WriteSome(&iov, &count);
    if (!s.ok() || count == 0) return s;
    s = WaitFor(WriteEvents(), WaitEnd(deadline), "write");
    if (!s.ok()) return s;
  }
}

Status Connection::ReadSome() {
  if (ssl_ != nullptr) return TlsReadSome();
  char* dest = buffer_.PrepareWrite(kReadChunk);
  for (;;) {
    ssize_t got = ::recv(fd_, dest, buffer_.writable(), MSG_DONTWAIT);
    if (got > 0) {
      buffer_.Commit(static_cast<std::size_t>(got));
      return Status::OK();
    }
    if (got == 0) return Status::IoError(Describe("connection closed by the server"));
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::OK();
    return Status::IoError(Describe(std::string("recv: ") + strerror(errno)));
  }
}

Status Connection::ReadMore(Deadline deadline) { return ReadMore(deadline, Clock::now()); }

Status Connection::PollThenRead(Deadline deadline) {
  Status s = WaitFor(POLLIN, WaitEnd(deadline), "read");
  if (!s.ok()) return s;
  return ReadSome();
}

Status Connection::ReadBlockingFailed(ssize_t got, Deadline deadline) {
  if (got == 0) return Status::IoError(Describe("connection closed by the server"));
  // Another blocking recv would wait a whole io_timeout again, so signals
  // arriving in a row could hold the call past its deadline: poll() instead.
  if (errno == EINTR) return PollThenRead(deadline);
  if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Timeout(Describe("read timed out"));
  return Status::IoError(Describe(std::string("recv: ") + strerror(errno)));
}

}  // namespace cachet::net
