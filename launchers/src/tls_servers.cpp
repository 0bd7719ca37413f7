// TestCertificates (the openssl command) and the TLS and Unix-socket launchers.
#include "launchers/tls_servers.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace cachet::test {

namespace {

// Runs `command` through the shell, its output discarded: kOk when it exits 0.
Status Shell(const std::string& command) {
  const int rc = std::system((command + " >/dev/null 2>&1").c_str());
  if (rc == 0) return Status::OK();
  return Status::Internal("command failed (" + std::to_string(rc) + "): " + command);
}

// A new EC key and a request for `subject`, signed by `ca` for `days` (a
// negative count makes it expired), with the extensions in `extensions`.
Status MakeSigned(const std::string& dir, const std::string& name, const std::string& subject,
                  const std::string& ca, int days, const std::string& extensions) {
  const std::string base = dir + "/" + name;
  std::ofstream(base + ".ext") << extensions << '\n';
  Status s = Shell(
      "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-keyout " +
      base + ".key -out " + base + ".csr -subj " + subject);
  if (!s.ok()) return s;
  return Shell("openssl x509 -req -in " + base + ".csr -CA " + dir + "/" + ca + ".crt -CAkey " +
               dir + "/" + ca + ".key -CAcreateserial -days " + std::to_string(days) +
               " -extfile " + base + ".ext -out " + base + ".crt");
}

Status MakeCa(const std::string& dir, const std::string& name) {
  return Shell(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-keyout " +
      dir + "/" + name + ".key -out " + dir + "/" + name + ".crt -days 2 -subj /CN=cachet-test-" +
      name);
}

constexpr const char* kServerExtensions =
    "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1";

}  // namespace

bool HaveOpenSsl() { return std::system("command -v openssl >/dev/null 2>&1") == 0; }

Result<std::unique_ptr<TestCertificates>> TestCertificates::Make() {
  const std::string dir = MakeTempDirectory("cachet-tls-");
  if (dir.empty()) return Status::IoError("cannot make a temporary directory");
  std::unique_ptr<TestCertificates> made(new TestCertificates(dir));
  Status s = MakeCa(dir, "ca");
  if (s.ok()) s = MakeCa(dir, "other-ca");
  if (s.ok()) s = MakeSigned(dir, "server", "/CN=localhost", "ca", 2, kServerExtensions);
  if (s.ok()) {
    s = MakeSigned(dir, "client", "/CN=cachet-client", "ca", 2,
                   "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth");
  }
  // -days -1: valid from now until yesterday, so expired for every check.
  if (s.ok()) s = MakeSigned(dir, "expired", "/CN=localhost", "ca", -1, kServerExtensions);
  if (s.ok()) {
    s = MakeSigned(dir, "elsewhere", "/CN=elsewhere.example", "ca", 2,
                   "basicConstraints=CA:FALSE\nsubjectAltName=DNS:elsewhere.example");
  }
  if (!s.ok()) return s;
  return made;
}

TestCertificates::~TestCertificates() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

Result<std::unique_ptr<ServerProcess>> StartRedisTls(const CertificatePair& server,
                                                     const std::string& ca,
                                                     bool require_client_cert,
                                                     std::vector<std::string> extra_args) {
  auto argv_for_port = [=](int port) {
    std::vector<std::string> argv = {"redis-server",
                                     "--port",
                                     "0",
                                     "--tls-port",
                                     std::to_string(port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--tls-cert-file",
                                     server.cert,
                                     "--tls-key-file",
                                     server.key,
                                     "--tls-ca-cert-file",
                                     ca,
                                     "--tls-auth-clients",
                                     require_client_cert ? "yes" : "no"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    return argv;
  };
  return ServerProcess::Start("redis-server (TLS)", std::move(argv_for_port));
}

Result<std::unique_ptr<ServerProcess>> StartMemcachedTls(const CertificatePair& server,
                                                         const std::string& ca,
                                                         bool require_client_cert) {
  auto argv_for_port = [=](int port) {
    std::vector<std::string> argv = {"memcached",
                                     "-l",
                                     "127.0.0.1",
                                     "-p",
                                     std::to_string(port),
                                     "-U",
                                     "0",
                                     "-m",
                                     "64",
                                     "-t",
                                     "2",
                                     "-Z",
                                     "-o",
                                     "ssl_chain_cert=" + server.cert + ",ssl_key=" + server.key +
                                         ",ssl_ca_cert=" + ca +
                                         ",ssl_verify_mode=" + (require_client_cert ? "2" : "0")};
    if (geteuid() == 0) {
      argv.push_back("-u");
      argv.push_back("root");
    }
    return argv;
  };
  return ServerProcess::Start("memcached (TLS)", std::move(argv_for_port));
}

Result<std::unique_ptr<UnixSocketServer>> UnixSocketServer::Start(
    const std::string& name, std::vector<std::string> (*argv)(const std::string& path)) {
  std::unique_ptr<UnixSocketServer> server(new UnixSocketServer);
  server->dir_ = MakeTempDirectory("cachet-unix-");
  if (server->dir_.empty()) return Status::IoError("cannot make a temporary directory");
  server->path_ = server->dir_ + "/" + name + ".sock";
  const std::string path = server->path_;
  auto started = ServerProcess::Start(
      name + " (unix)", [=](int) { return argv(path); }, ServerProcess::kDefaultReadyTimeout,
      [=](int) { return AcceptsUnixConnections(path); });
  if (!started.ok()) return started.status();
  server->process_ = std::move(started).value();
  return server;
}

Result<std::unique_ptr<UnixSocketServer>> UnixSocketServer::StartMemcached() {
  return Start("memcached", [](const std::string& path) {
    std::vector<std::string> argv = {"memcached", "-s", path, "-a", "700", "-U",
                                     "0",         "-m", "64", "-t", "2"};
    if (geteuid() == 0) {
      argv.push_back("-u");
      argv.push_back("root");
    }
    return argv;
  });
}

Result<std::unique_ptr<UnixSocketServer>> UnixSocketServer::StartRedis() {
  return Start("redis-server", [](const std::string& path) {
    return std::vector<std::string>{
        "redis-server", "--port", "0", "--unixsocket", path, "--unixsocketperm",
        "700",          "--save", "",  "--appendonly", "no"};
  });
}

UnixSocketServer::~UnixSocketServer() {
  process_.reset();  // stopped first: it removes its socket
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace cachet::test
