// TlsContext: the OpenSSL client context of one store, its per-server session
// store, and the socket BIO every TLS connection uses.
#include "cachet/net/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "cachet/log.h"
#include "tls_socket.h"

namespace cachet::net {

namespace tls {

namespace {

// What the socket BIO knows: its descriptor, why the last system call
// failed, whether its next receive may block, and whether the last such
// receive ran out its time.
struct SocketState {
  int fd = -1;
  int last_errno = 0;
  bool block_next = false;        // SetBlockingReads(true) asked for one blocking receive
  bool blocking_ran_out = false;  // that receive ended with the socket's receive timeout
};

SocketState* StateOf(BIO* bio) noexcept { return static_cast<SocketState*>(BIO_get_data(bio)); }

int SocketWrite(BIO* bio, const char* data, int size) {
  SocketState* state = StateOf(bio);
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t sent =
        ::send(state->fd, data, static_cast<std::size_t>(size), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) return static_cast<int>(sent);
    state->last_errno = errno;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return -1;
  }
}

int SocketRead(BIO* bio, char* data, int size) {
  SocketState* state = StateOf(bio);
  BIO_clear_retry_flags(bio);
  // Only one receive blocks: OpenSSL receives a record in several, and a
  // server trickling one must meet the caller's deadline (poll() keeps it),
  // not hold a blocking SSL_read for as long as each byte comes within the
  // socket's receive timeout.
  const bool blocking = std::exchange(state->block_next, false);
  const ssize_t got =
      ::recv(state->fd, data, static_cast<std::size_t>(size), blocking ? 0 : MSG_DONTWAIT);
  if (got >= 0) return static_cast<int>(got);  // 0: the server closed
  state->last_errno = errno;
  if (blocking && (errno == EAGAIN || errno == EWOULDBLOCK)) state->blocking_ran_out = true;
  // A receive timeout, nothing yet, or a signal: the connection decides whether to wait on.
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(bio);
  return -1;
}

long SocketControl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

int SocketCreate(BIO* bio) {
  BIO_set_data(bio, new SocketState);
  BIO_set_init(bio, 1);
  return 1;
}

int SocketDestroy(BIO* bio) {
  delete StateOf(bio);
  BIO_set_data(bio, nullptr);
  return 1;
}

// Made once, never freed: every SSL of the process shares it.
BIO_METHOD* SocketMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cachet socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, &SocketWrite);
      BIO_meth_set_read(m, &SocketRead);
      BIO_meth_set_ctrl(m, &SocketControl);
      BIO_meth_set_create(m, &SocketCreate);
      BIO_meth_set_destroy(m, &SocketDestroy);
    }
    return m;
  }();
  return method;
}

}  // namespace

bool AttachSocket(SSL* ssl, int fd) {
  BIO_METHOD* method = SocketMethod();
  BIO* bio = method == nullptr ? nullptr : BIO_new(method);
  if (bio == nullptr) return false;
  StateOf(bio)->fd = fd;
  SSL_set_bio(ssl, bio, bio);  // one BIO both ways; the SSL owns it
  return true;
}

void SetBlockingReads(SSL* ssl, bool blocking) noexcept {
  SocketState* state = StateOf(SSL_get_rbio(ssl));
  state->block_next = blocking;
  if (blocking) {
    state->last_errno = 0;
    state->blocking_ran_out = false;
  }
}

int LastSocketErrno(SSL* ssl) noexcept { return StateOf(SSL_get_rbio(ssl))->last_errno; }

bool BlockingReadRanOut(SSL* ssl) noexcept { return StateOf(SSL_get_rbio(ssl))->blocking_ran_out; }

std::string ErrorText(SSL* ssl, int ret) {
  const int code = SSL_get_error(ssl, ret);
  // The first error queued is the cause; later ones are its consequences.
  const unsigned long first = ERR_peek_error();
  ERR_clear_error();
  std::string text;
  if (first != 0) {
    if (ERR_GET_REASON(first) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
      text = "the server closed the connection";
    } else {
      const char* reason = ERR_reason_error_string(first);
      text = reason != nullptr ? reason : "error " + std::to_string(first);
    }
    const long verified = SSL_get_verify_result(ssl);
    if (verified != X509_V_OK) {
      text += std::string(" (") + X509_verify_cert_error_string(verified) + ")";
    }
    return text;
  }
  if (code == SSL_ERROR_ZERO_RETURN) return "the server closed the connection (close_notify)";
  const int error = LastSocketErrno(ssl);
  if (code == SSL_ERROR_SYSCALL && (ret == 0 || error == 0)) {
    return "the server closed the connection";
  }
  return std::strerror(error);
}

}  // namespace tls

namespace {

// OpenSSL's reason for the last failure on this thread, the queue emptied.
std::string OpenSslReason() {
  const unsigned long first = ERR_peek_error();
  ERR_clear_error();
  if (first == 0) return "unknown error";
  const char* reason = ERR_reason_error_string(first);
  return reason != nullptr ? reason : "error " + std::to_string(first);
}

// kConfigError about the file an option names; *failed_option says which.
Status BadFile(std::string_view option, std::string_view why, std::string_view* failed_option) {
  *failed_option = option;
  return Status::ConfigError(std::string(why));
}

// kOk when `path` is a readable file (or, with `directory`, a directory).
Status CheckPath(std::string_view option, const std::string& path, bool directory,
                 std::string_view* failed_option) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || ::access(path.c_str(), R_OK) != 0) {
    return BadFile(option, std::strerror(errno), failed_option);
  }
  if (directory != S_ISDIR(st.st_mode)) {
    return BadFile(option, directory ? "not a directory" : "a directory, not a file",
                   failed_option);
  }
  return Status::OK();
}

// The host without IPv6 brackets: what certificates name.
std::string NameOf(const ServerAddress& server) {
  const std::string& host = server.host;
  if (host.size() > 2 && host.front() == '[') return host.substr(1, host.size() - 2);
  return host;
}

bool IsIpLiteral(const std::string& name) {
  unsigned char address[16];
  return inet_pton(AF_INET, name.c_str(), address) == 1 ||
         inet_pton(AF_INET6, name.c_str(), address) == 1;
}

}  // namespace

Status TlsContext::Create(const TlsOptions& options, std::shared_ptr<const TlsContext>* out,
                          std::string_view* failed_option) {
  std::shared_ptr<TlsContext> made(new TlsContext(options));
  const TlsOptions& o = made->options_;
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Internal("TLS: " + OpenSslReason());
  made->ctx_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, o.min_version);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  // Partial writes, retried from a rebuilt buffer (Connection::TlsWritePieces);
  // read-ahead takes a whole record (or several) per receive.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_verify(ctx, o.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  // The client keeps sessions itself, one per server (KeepSession).
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &TlsContext::KeepSession);

  if (!o.ca_file.empty()) {
    if (Status s = CheckPath("tls_ca_file", o.ca_file, false, failed_option); !s.ok()) return s;
    if (SSL_CTX_load_verify_file(ctx, o.ca_file.c_str()) != 1) {
      return BadFile("tls_ca_file", "no CA certificate read: " + OpenSslReason(), failed_option);
    }
  }
  if (!o.ca_dir.empty()) {
    if (Status s = CheckPath("tls_ca_dir", o.ca_dir, true, failed_option); !s.ok()) return s;
    if (SSL_CTX_load_verify_dir(ctx, o.ca_dir.c_str()) != 1) {
      return BadFile("tls_ca_dir", OpenSslReason(), failed_option);
    }
  }
  if (o.ca_file.empty() && o.ca_dir.empty()) SSL_CTX_set_default_verify_paths(ctx);

  if (!o.key_file.empty() && o.cert_file.empty()) {
    return BadFile("tls_key_file", "a key without tls_cert_file", failed_option);
  }
  if (!o.cert_file.empty()) {
    if (Status s = CheckPath("tls_cert_file", o.cert_file, false, failed_option); !s.ok()) {
      return s;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, o.cert_file.c_str()) != 1) {
      return BadFile("tls_cert_file", "no certificate read: " + OpenSslReason(), failed_option);
    }
    // Without tls_key_file the key is expected in the certificate's file.
    const std::string_view key_option = o.key_file.empty() ? "tls_cert_file" : "tls_key_file";
    const std::string& key = o.key_file.empty() ? o.cert_file : o.key_file;
    if (Status s = CheckPath(key_option, key, false, failed_option); !s.ok()) return s;
    if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
      const std::string hint =
          o.key_file.empty() ? " (a key in a file of its own is named by tls_key_file)" : "";
      return BadFile(key_option, "no private key read: " + OpenSslReason() + hint, failed_option);
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return BadFile(key_option, "the key does not match the certificate", failed_option);
    }
  }
  // Once per process: every store and every Cache of it would say the same.
  static std::atomic<bool> warned{false};
  if (!o.verify && !warned.exchange(true)) {
    Logger()->warn(
        "TLS certificate verification is off (tls_verify = false): the server's identity is "
        "not checked");
  }
  *out = std::move(made);
  return Status::OK();
}

TlsContext::~TlsContext() {
  for (auto& [server, slot] : slots_) SSL_SESSION_free(slot->session);
  SSL_CTX_free(ctx_);
}

TlsContext::SessionSlot* TlsContext::SlotFor(const std::string& server) const {
  std::lock_guard<std::mutex> lock(slots_mutex_);
  std::unique_ptr<SessionSlot>& slot = slots_[server];
  if (!slot) slot = std::make_unique<SessionSlot>();
  return slot.get();
}

int TlsContext::KeepSession(SSL* ssl, SSL_SESSION* session) {
  auto* slot = static_cast<SessionSlot*>(SSL_get_app_data(ssl));
  if (slot == nullptr) return 0;
  std::lock_guard<std::mutex> lock(slot->mutex);
  SSL_SESSION_free(slot->session);
  slot->session = session;
  return 1;  // the slot keeps OpenSSL's reference
}

SSL* TlsContext::NewSsl(const ServerAddress& server, int fd, std::string* error) const {
  std::string name = options_.server_name;
  if (name.empty() && !server.IsUnix()) name = NameOf(server);
  if (name.empty() && options_.verify) {
    *error =
        "a unix: server over TLS needs tls_server_name, the name its certificate is "
        "checked against";
    return nullptr;
  }
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr || !tls::AttachSocket(ssl, fd)) {
    *error = "TLS setup: " + OpenSslReason();
    SSL_free(ssl);
    return nullptr;
  }
  const bool ip = IsIpLiteral(name);
  // SNI carries host names only (RFC 6066); an IP literal is checked as one.
  bool named = ip || name.empty() || SSL_set_tlsext_host_name(ssl, name.c_str()) == 1;
  if (named && options_.verify) {
    named = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str()) == 1
               : SSL_set1_host(ssl, name.c_str()) == 1;
  }
  if (!named) {
    *error = "TLS server name '" + name + "': " + OpenSslReason();
    SSL_free(ssl);
    return nullptr;
  }
  SessionSlot* slot = SlotFor(server.HostPort());
  SSL_set_app_data(ssl, slot);
  {
    std::lock_guard<std::mutex> lock(slot->mutex);
    if (slot->session != nullptr) SSL_set_session(ssl, slot->session);
  }
  SSL_set_connect_state(ssl);
  return ssl;
}

}  // namespace cachet::net
