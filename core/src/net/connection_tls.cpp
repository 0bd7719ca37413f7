// Connection over TLS: the handshake, and reads and writes through OpenSSL with
// the same deadlines as plain sockets.
//
// OpenSSL reads ahead: one receive may bring more than the record it returns,
// and what it keeps is invisible to poll(). So every read ends by taking what
// OpenSSL holds (TlsRead), and a poll() on the socket again means "nothing
// more has come". Writes go out in records of up to 16 KiB; a write the socket
// could not take whole is retried with the same bytes, as OpenSSL requires.
// A value sent in place ends its record with its "\r\n": memcached (1.6)
// reads such a value straight into its item, and commands after it in the
// same record would wait in its OpenSSL buffer, unseen by its event loop,
// until the client gave up.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "cachet/net/connection.h"
#include "cachet/net/tls.h"
#include "tls_socket.h"

namespace cachet::net {

namespace {

// The most one TLS record carries: pieces smaller than this are gathered.
constexpr std::size_t kTlsRecord = 16 * 1024;

int ClampToInt(std::size_t size) { return static_cast<int>(std::min<std::size_t>(size, INT_MAX)); }

// Advances `*iov`/`*count` past `sent` bytes.
void Advance(iovec** iov, int* count, std::size_t sent) {
  while (*count > 0 && sent >= (*iov)->iov_len) {
    sent -= (*iov)->iov_len;
    ++*iov;
    --*count;
  }
  if (*count > 0) {
    (*iov)->iov_base = static_cast<char*>((*iov)->iov_base) + sent;
    (*iov)->iov_len -= sent;
  }
}

// The poll() events an SSL operation's failure waits for; 0 for a real failure.
short WantedEvents(SSL* ssl, int ret) {
  switch (SSL_get_error(ssl, ret)) {
    case SSL_ERROR_WANT_READ:
      return POLLIN;
    case SSL_ERROR_WANT_WRITE:
      return POLLOUT;
    default:
      return 0;
  }
}

}  // namespace

bool Connection::tls_resumed() const noexcept {
  return ssl_ != nullptr && SSL_session_reused(ssl_) == 1;
}

Status Connection::StartHandshake() {
  std::string error;
  ssl_ = options_.tls->NewSsl(address_, fd_, &error);
  if (ssl_ == nullptr) {
    Status failed = Status::Unavailable(Describe(error));
    Close();
    return failed;
  }
  handshaking_ = true;
  connect_deadline_ = std::min(Clock::now() + options_.io_timeout, connect_limit_);
  return ContinueHandshake();
}

Status Connection::ContinueHandshake() {
  ERR_clear_error();
  const int ret = SSL_connect(ssl_);
  if (ret == 1) {
    handshaking_ = false;
    connecting_ = false;
    return Status::OK();
  }
  handshake_events_ = WantedEvents(ssl_, ret);
  if (handshake_events_ != 0) return Status::OK();  // the caller waits for ConnectEvents()
  Status failed =
      Status::Unavailable(Describe("TLS handshake failed: " + tls::ErrorText(ssl_, ret)));
  ERR_clear_error();
  Close();
  return failed;
}

Status Connection::HandshakeTimeout() const {
  // A plain-text server waits for a request and never answers a hello.
  return Status::Timeout(Describe(
      "TLS handshake timed out (the server does not speak TLS on this port, or is stalled)"));
}

bool Connection::TlsQuietSinceLastUse() {
  char byte;
  const ssize_t got = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return TlsQuiet(got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), got > 0);
}

bool Connection::TlsQuiet(bool socket_silent, bool socket_has_bytes) {
  if (!socket_silent && !socket_has_bytes) return false;  // closed, or failed
  // A close_notify read with the last reply: the server ended the session.
  if ((SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0) return false;
  if (socket_silent && SSL_has_pending(ssl_) == 0) return true;
  // Something came while the connection was idle: a session ticket is
  // housekeeping; a byte of data, an alert or half a record is not. Peeked, so
  // data stays for UnaskedBytesArrived() to see.
  char byte;
  ERR_clear_error();
  const int ret = SSL_peek(ssl_, &byte, 1);
  const bool housekeeping =
      ret <= 0 && SSL_get_error(ssl_, ret) == SSL_ERROR_WANT_READ && SSL_has_pending(ssl_) == 0;
  ERR_clear_error();
  if (!housekeeping) return false;
  const ssize_t got = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

Status Connection::TlsFailure(int ret, std::string_view what) {
  const bool socket_failed = SSL_get_error(ssl_, ret) == SSL_ERROR_SYSCALL;
  Status failed =
      Status::IoError(Describe("TLS " + std::string(what) + ": " + tls::ErrorText(ssl_, ret)));
  if (what != "write" || !socket_failed) return failed;
  // A server that refuses the client (no certificate, say) sends an alert and
  // closes: a write then fails, but the alert, if it came, says why.
  char byte;
  ERR_clear_error();
  const int read = SSL_read(ssl_, &byte, 1);
  if (read <= 0 && SSL_get_error(ssl_, read) == SSL_ERROR_SSL) {
    return Status::IoError(Describe("TLS: " + tls::ErrorText(ssl_, read)));
  }
  ERR_clear_error();
  return failed;
}

Status Connection::TlsWrite(std::string_view* rest) {
  if (rest->empty()) return Status::OK();
  ERR_clear_error();
  const int ret = SSL_write(ssl_, rest->data(), ClampToInt(rest->size()));
  if (ret > 0) {
    write_events_ = POLLOUT;
    rest->remove_prefix(static_cast<std::size_t>(ret));
    return Status::OK();
  }
  // A full socket (POLLOUT), or a handshake message to receive first
  // (POLLIN): the caller waits for that (WriteEvents) and offers the same
  // bytes again.
  if (const short wanted = WantedEvents(ssl_, ret); wanted != 0) {
    write_events_ = wanted;
    if (wanted == POLLIN) ++tls_crossed_.write_wanted_read;
    return Status::OK();
  }
  return TlsFailure(ret, "write");
}

Status Connection::TlsWritePieces(iovec** iov, int* count) {
  while (*count > 0) {
    std::string_view chunk = TlsRecordAt(*iov, *count);
    if (chunk.empty()) {  // empty pieces: skipped
      Advance(iov, count, 0);
      continue;
    }
    std::string_view rest = chunk;
    if (Status s = TlsWrite(&rest); !s.ok()) return s;
    const std::size_t sent = chunk.size() - rest.size();
    if (sent == 0) return Status::OK();  // the socket is full
    Advance(iov, count, sent);
  }
  return Status::OK();
}

std::string_view Connection::TlsRecordAt(const iovec* iov, int count) {
  const std::string_view first(static_cast<const char*>(iov[0].iov_base), iov[0].iov_len);
  // A piece that starts with "\r\n" follows a value sent in place (request
  // buffers copy small values into the text): the data block's end is a record
  // of its own, so what comes next is in the next record.
  if (first.starts_with("\r\n")) return first.substr(0, 2);
  if (count == 1 || first.size() >= kTlsRecord) return first;
  // Small pieces go out as one record, up to the end of the next value's
  // "\r\n". After a full socket the same pieces are gathered again, so the
  // retry offers the same bytes, as OpenSSL requires.
  tls_gather_.clear();
  for (int i = 0; i < count && tls_gather_.size() < kTlsRecord; ++i) {
    const std::string_view piece(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
    if (i > 0 && piece.starts_with("\r\n")) {
      tls_gather_.append(
          piece.substr(0, std::min<std::size_t>(2, kTlsRecord - tls_gather_.size())));
      break;
    }
    tls_gather_.append(piece.substr(0, kTlsRecord - tls_gather_.size()));
  }
  return tls_gather_;
}

Status Connection::TlsRead(short* want) {
  *want = 0;
  char* dest = buffer_.PrepareWrite(kReadChunk);
  ERR_clear_error();
  int ret = SSL_read(ssl_, dest, ClampToInt(buffer_.writable()));
  tls::SetBlockingReads(ssl_, false);
  if (ret <= 0) {
    *want = WantedEvents(ssl_, ret);
    if (*want == 0) return TlsFailure(ret, "read");
    read_events_ = *want;  // POLLOUT when OpenSSL must send before it reads on
    if (*want == POLLOUT) ++tls_crossed_.read_wanted_write;
    return Status::OK();
  }
  read_events_ = POLLIN;
  buffer_.Commit(static_cast<std::size_t>(ret));
  // What OpenSSL read ahead is taken now: poll() would not see it. Half a
  // record stays; its rest is still in the socket, where poll() sees it.
  while (SSL_has_pending(ssl_) != 0) {
    dest = buffer_.PrepareWrite(kReadChunk);
    ret = SSL_read(ssl_, dest, ClampToInt(buffer_.writable()));
    if (ret <= 0) {
      // A failure is met again by the next read (or the pool's check).
      ERR_clear_error();
      break;
    }
    buffer_.Commit(static_cast<std::size_t>(ret));
  }
  return Status::OK();
}

Status Connection::TlsReadSome() {
  short want = 0;
  return TlsRead(&want);
}

Status Connection::TlsReadMore(Deadline deadline, Clock::time_point now) {
  short want = 0;
  // Early in an exchange one blocking read waits for the reply, as on plain
  // sockets (the socket's receive timeout is io_timeout).
  if (options_.io_timeout.count() > 0 && now + options_.io_timeout <= deadline + kBlockingSlack &&
      SSL_has_pending(ssl_) == 0) {
    tls::SetBlockingReads(ssl_, true);
    Status s = TlsRead(&want);
    if (!s.ok() || want == 0) return s;
    if (want == POLLIN && tls::BlockingReadRanOut(ssl_)) {
      return Status::Timeout(Describe("read timed out"));
    }
    // Part of a record, a signal, or OpenSSL wants to write: poll() from
    // here, up to `deadline`.
  }
  for (;;) {
    if (want != 0) {
      if (Status s = WaitFor(want, WaitEnd(deadline), "read"); !s.ok()) return s;
    }
    if (Status s = TlsRead(&want); !s.ok() || want == 0) return s;
  }
}

}  // namespace cachet::net
