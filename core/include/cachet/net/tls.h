// TLS for network stores: the options, and the OpenSSL context built from them.
//
// A store whose section says `tls = true` gets one TlsContext when the Cache
// opens (pool_config.h reads the options): the CA, the client certificate and
// its key are read then, once, so a bad file is a config error before anything
// connects. Every Connection of the store shares the context (through
// ConnectionOptions::tls) and makes its own SSL object from it on connect
// (connection.h). The context also keeps the last TLS session each server
// handed out, so a reconnect resumes it instead of a full handshake.
//
// OpenSSL's types stay out of this header: the context is opaque to plugins,
// which get TLS by using Connection. Thread-safe: a TlsContext is immutable
// after Create() apart from its session store, which has its own lock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "cachet/export.h"
#include "cachet/net/endpoint.h"
#include "cachet/status.h"

struct ssl_st;
struct ssl_ctx_st;
struct ssl_session_st;

namespace cachet::net {

// What the tls_* options of a store's section say (see pool_config.h).
struct TlsOptions {
  bool enabled = false;      // tls
  std::string ca_file;       // tls_ca_file: PEM CA bundle; with ca_dir empty too: system CAs
  std::string ca_dir;        // tls_ca_dir: a hashed CA directory (c_rehash)
  std::string cert_file;     // tls_cert_file: the client certificate (chain), PEM
  std::string key_file;      // tls_key_file: its private key, PEM; empty: in cert_file
  std::string server_name;   // tls_server_name: SNI and the name verified; empty: the host
  bool verify = true;        // tls_verify: check the server's certificate and name
  int min_version = 0x0303;  // tls_min_version: 0x0303 (TLS 1.2) or 0x0304 (TLS 1.3)
};

class CACHET_EXPORT TlsContext {
 public:
  // Builds the context, reading every file `options` names. Otherwise
  // kConfigError with the reason (the system's or OpenSSL's), and
  // *failed_option set to the option naming the file, for the caller to say
  // which file it was and where it was set (ConfigSection::ErrorAt).
  static Status Create(const TlsOptions& options, std::shared_ptr<const TlsContext>* out,
                       std::string_view* failed_option);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  const TlsOptions& options() const noexcept { return options_; }

  // A client SSL object for `server` on the connected socket `fd`: SNI and
  // the verified name set, the server's last session offered for resumption,
  // I/O through cachet's socket BIO (see tls_socket.h). Null with *error set
  // when it cannot be made. The caller owns it (SSL_free).
  ssl_st* NewSsl(const ServerAddress& server, int fd, std::string* error) const;

 private:
  // One server's last session; stable in memory, so an SSL can point at it.
  struct SessionSlot {
    std::mutex mutex;
    ssl_session_st* session = nullptr;  // owned: one reference
  };

  explicit TlsContext(TlsOptions options) : options_(std::move(options)) {}
  SessionSlot* SlotFor(const std::string& server) const;
  // OpenSSL's new-session callback: keeps the session in its server's slot.
  static int KeepSession(ssl_st* ssl, ssl_session_st* session);

  TlsOptions options_;
  ssl_ctx_st* ctx_ = nullptr;
  mutable std::mutex slots_mutex_;  // guards slots_ (not the slots)
  mutable std::map<std::string, std::unique_ptr<SessionSlot>, std::less<>> slots_;
};

}  // namespace cachet::net
