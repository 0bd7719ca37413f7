// TLS plumbing private to core/net: the socket BIO that TLS connections read and
// write through, and the wording of OpenSSL's errors.
//
// The BIO sends with MSG_NOSIGNAL | MSG_DONTWAIT (a dead peer is EPIPE, never
// SIGPIPE; a full socket is a retry, never a block) and receives with
// MSG_DONTWAIT unless the connection asks for one blocking receive (ReadMore
// early in an exchange, as plain TCP does: the socket's receive timeout bounds
// it). Only that one receive blocks, even when the SSL_read it serves needs
// more: the rest of a record is waited for with poll(), within the deadline.
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace cachet::net::tls {

// Attaches a socket BIO over `fd` to `ssl` (for reading and writing). False
// when OpenSSL could not allocate it.
bool AttachSocket(SSL* ssl, int fd);

// Whether the next receive may block (up to the socket's receive timeout);
// the ones after it never do.
void SetBlockingReads(SSL* ssl, bool blocking) noexcept;

// True when the blocking receive SetBlockingReads(true) allowed ran out the
// socket's receive timeout (io_timeout of silence).
bool BlockingReadRanOut(SSL* ssl) noexcept;

// The errno of the BIO's last failed receive or send (EAGAIN, EINTR, ...).
int LastSocketErrno(SSL* ssl) noexcept;

// Why the SSL operation that returned `ret` failed: OpenSSL's reason, the
// certificate verification result when there is one, or the socket's error.
// Takes the thread's OpenSSL error queue.
std::string ErrorText(SSL* ssl, int ret);

}  // namespace cachet::net::tls
