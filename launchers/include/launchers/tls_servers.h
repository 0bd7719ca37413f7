// Test certificates, and memcached and redis-server over TLS or Unix sockets.
//
// TestCertificates::Make() writes, with the openssl command, into a fresh
// temporary directory (removed with the object): a CA; a server certificate it
// signed for 127.0.0.1 and localhost; a client certificate it signed; an
// expired server certificate; a server certificate for another name only; and
// a second CA that signed none of them. EC P-256 keys, so making them is quick.
//
// The launchers start servers as server_process.h does: a free loopback port
// (TLS), or a socket path in a temporary directory (Unix), stopped by PID.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "launchers/server_process.h"

namespace cachet::test {

struct CertificatePair {
  std::string cert;  // PEM certificate
  std::string key;   // PEM private key
};

class TestCertificates {
 public:
  static Result<std::unique_ptr<TestCertificates>> Make();
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  const std::string& dir() const { return dir_; }
  std::string ca() const { return dir_ + "/ca.crt"; }
  std::string other_ca() const { return dir_ + "/other-ca.crt"; }
  CertificatePair server() const { return Pair("server"); }
  CertificatePair client() const { return Pair("client"); }
  CertificatePair expired() const { return Pair("expired"); }
  CertificatePair wrong_name() const { return Pair("elsewhere"); }

 private:
  explicit TestCertificates(std::string dir) : dir_(std::move(dir)) {}
  CertificatePair Pair(const std::string& name) const {
    return {dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
  }
  std::string dir_;
};

// True when the openssl command is on PATH.
bool HaveOpenSsl();

// redis-server with TLS only (--port 0 --tls-port PORT) presenting `server`,
// trusting `ca` for client certificates, which it requires when
// `require_client_cert`.
Result<std::unique_ptr<ServerProcess>> StartRedisTls(const CertificatePair& server,
                                                     const std::string& ca,
                                                     bool require_client_cert,
                                                     std::vector<std::string> extra_args = {});

// memcached -Z presenting `server`; ssl_verify_mode 2 (a client certificate
// signed by `ca` required) when `require_client_cert`, else 0.
Result<std::unique_ptr<ServerProcess>> StartMemcachedTls(const CertificatePair& server,
                                                         const std::string& ca,
                                                         bool require_client_cert);

// A server listening on a Unix socket only; its path is `socket_path()`, in a
// temporary directory removed with the object.
class UnixSocketServer {
 public:
  // memcached -s PATH, or redis-server --port 0 --unixsocket PATH.
  static Result<std::unique_ptr<UnixSocketServer>> StartMemcached();
  static Result<std::unique_ptr<UnixSocketServer>> StartRedis();
  ~UnixSocketServer();
  UnixSocketServer(const UnixSocketServer&) = delete;
  UnixSocketServer& operator=(const UnixSocketServer&) = delete;

  const std::string& socket_path() const { return path_; }
  // "unix:PATH", as written in `servers`.
  std::string address() const { return "unix:" + path_; }
  ServerProcess& process() { return *process_; }

 private:
  UnixSocketServer() = default;
  static Result<std::unique_ptr<UnixSocketServer>> Start(
      const std::string& name, std::vector<std::string> (*argv)(const std::string& path));
  std::string dir_;
  std::string path_;
  std::unique_ptr<ServerProcess> process_;
};

}  // namespace cachet::test
