// ServerProcess: spawning, readiness polling and PID-based stopping of test servers.
#include "launchers/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace cachet::test {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kPortAttempts = 4;
constexpr milliseconds kPollStep{10};
constexpr milliseconds kStopGrace{5000};

sockaddr_in LoopbackAddress(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Reaps `pid` if it has exited. True when it is gone.
bool Reaped(pid_t pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

// Waits up to `limit` for `pid` to exit, polling in small steps.
bool WaitForExit(pid_t pid, milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (Reaped(pid)) return true;
    std::this_thread::sleep_for(kPollStep);
  }
  return Reaped(pid);
}

Result<pid_t> Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The server's chatter would interleave with the test report; it goes nowhere.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return Status::Unavailable("cannot spawn " + args[0] + ": " + std::strerror(rc));
  }
  return pid;
}

}  // namespace

int FindFreeLoopbackPort() { return RefusingPort().port(); }  // bound, read, closed

RefusingPort::RefusingPort() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in addr = LoopbackAddress(0);
  socklen_t len = sizeof(addr);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port_ = ntohs(addr.sin_port);
  }
}

RefusingPort::~RefusingPort() {
  if (fd_ >= 0) close(fd_);
}

std::string CommandOutput(const std::string& shell_command) {
  std::string out;
  FILE* pipe = popen(shell_command.c_str(), "r");
  if (pipe == nullptr) return out;
  char chunk[4096];
  for (std::size_t n; (n = fread(chunk, 1, sizeof chunk, pipe)) > 0;) out.append(chunk, n);
  pclose(pipe);
  return out;
}

int ListenOnLoopback(int backlog, int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr = LoopbackAddress(0);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

bool AcceptsConnections(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr = LoopbackAddress(port);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

bool AcceptsUnixConnections(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

std::string MakeTempDirectory(const std::string& prefix) {
  // In memory unless TMPDIR says otherwise: a cluster node fsyncs its config on
  // every slot or role change, and a slow disk stretches that past its node timeout.
  std::vector<std::string> bases;
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && *tmp != '\0') bases.emplace_back(tmp);
  bases.emplace_back("/dev/shm");
  bases.emplace_back("/tmp");
  for (const std::string& base : bases) {
    std::string path = base + "/" + prefix + "XXXXXX";
    if (mkdtemp(path.data()) != nullptr) return path;
  }
  return std::string();
}

ServerProcess::ServerProcess(std::string name, ArgvForPort argv_for_port,
                             milliseconds ready_timeout, ReadyCheck ready)
    : name_(std::move(name)),
      argv_for_port_(std::move(argv_for_port)),
      ready_timeout_(ready_timeout),
      ready_(std::move(ready)) {}

Result<std::unique_ptr<ServerProcess>> ServerProcess::Start(std::string name,
                                                            ArgvForPort argv_for_port,
                                                            milliseconds ready_timeout,
                                                            ReadyCheck ready) {
  std::unique_ptr<ServerProcess> server(new ServerProcess(
      std::move(name), std::move(argv_for_port), ready_timeout, std::move(ready)));
  Status last = Status::Unavailable("no free loopback port");
  // Another process may grab the port between FindFreeLoopbackPort and the
  // server's bind; a fresh port is then tried.
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    server->port_ = FindFreeLoopbackPort();
    if (server->port_ == 0) continue;
    last = server->Launch();
    if (last.ok()) return server;
  }
  return last;
}

ServerProcess::~ServerProcess() { (void)Stop(); }

std::string ServerProcess::address() const { return "127.0.0.1:" + std::to_string(port_); }

Status ServerProcess::Launch() {
  Result<pid_t> pid = Spawn(argv_for_port_(port_));
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  const auto deadline = Clock::now() + ready_timeout_;
  while (Clock::now() < deadline) {
    if (ready_ ? ready_(port_) : AcceptsConnections(port_)) return Status::OK();
    if (Reaped(pid_)) {
      pid_ = -1;
      return Status::Unavailable(name_ + " exited before accepting connections on port " +
                                 std::to_string(port_));
    }
    std::this_thread::sleep_for(kPollStep);
  }
  (void)Kill();
  return Status::Unavailable(name_ + " did not accept connections on port " +
                             std::to_string(port_) + " in time");
}

Status ServerProcess::Signal(int signo) const {
  if (pid_ <= 0) return Status::Unavailable(name_ + " is not running");
  if (kill(pid_, signo) != 0) {
    return Status::IoError(name_ + ": kill(" + std::to_string(pid_) + "): " + std::strerror(errno));
  }
  return Status::OK();
}

Status ServerProcess::Stop() {
  if (pid_ <= 0) return Status::OK();
  (void)Signal(SIGTERM);
  // A paused server cannot act on SIGTERM until it runs again.
  (void)Signal(SIGCONT);
  if (!WaitForExit(pid_, kStopGrace)) return Kill();
  pid_ = -1;
  return Status::OK();
}

Status ServerProcess::Kill() {
  if (pid_ <= 0) return Status::OK();
  Status s = Signal(SIGKILL);
  if (s.ok() && !WaitForExit(pid_, kStopGrace)) {
    s = Status::Internal(name_ + " survived SIGKILL");
  }
  pid_ = -1;
  return s;
}

// SIGSTOP is delivered asynchronously: without waiting for the stop, a request
// sent right after Pause() could still be answered. The server is our child, so
// waitpid(WUNTRACED) reports the moment it has stopped (bounded: 5 s).
Status ServerProcess::Pause() {
  Status s = Signal(SIGSTOP);
  if (!s.ok()) return s;
  for (int i = 0; i < 500; ++i) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WUNTRACED | WNOHANG);
    if (r == pid_ && WIFSTOPPED(status)) return Status::OK();
    if (r < 0) return Status::IoError(std::string("waitpid: ") + std::strerror(errno));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Timeout("server did not stop within 5 s of SIGSTOP");
}

Status ServerProcess::Resume() { return Signal(SIGCONT); }

Status ServerProcess::Restart() {
  Status s = Stop();
  if (!s.ok()) return s;
  return Launch();
}

}  // namespace cachet::test
