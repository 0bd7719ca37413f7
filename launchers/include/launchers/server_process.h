// ServerProcess: a real server (memcached, redis-server, ...) started by a test on a
// free loopback port, and stopped by its PID.
//
// Start() picks a free port (bind port 0 on 127.0.0.1), spawns the program with an
// argv built for that port, and waits, for a bounded time, until the port accepts
// connections. The destructor stops the process: SIGTERM, a bounded wait, then
// SIGKILL. Pause()/Resume() send SIGSTOP/SIGCONT (a stalled server); Kill() sends
// SIGKILL (a crashed server); Restart() starts the same argv again on the same
// port. Nothing is ever signalled by name, only by the PID this object spawned.
//
// Not thread-safe: one test thread drives a ServerProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet::test {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
int FindFreeLoopbackPort();

// A port on 127.0.0.1 that refuses every connection for as long as this object
// lives: bound, never listened on, so no other socket can take it meanwhile (a
// port FindFreeLoopbackPort gave may be taken by a listener of another test).
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const noexcept { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Everything `shell_command` prints on its standard output, as it printed it
// ("" if it could not be run). Tests use it to drive redis-cli.
std::string CommandOutput(const std::string& shell_command);

// A socket listening on 127.0.0.1 at a port the kernel picked, for in-test fake
// servers: its descriptor, with the port in *port; -1 if it could not be made.
int ListenOnLoopback(int backlog, int* port);

// True if a TCP connection to 127.0.0.1:port succeeds right now.
bool AcceptsConnections(int port);

// True if a connection to the Unix-domain socket at `path` succeeds right now.
bool AcceptsUnixConnections(const std::string& path);

// A fresh directory whose name starts with `prefix`, under $TMPDIR when set, else
// /dev/shm, else /tmp (the first that takes it); "" if none did. The caller removes it.
std::string MakeTempDirectory(const std::string& prefix);

class ServerProcess {
 public:
  // Builds the argv (argv[0] is the program, searched in PATH) for a port.
  using ArgvForPort = std::function<std::vector<std::string>(int port)>;
  // Whether the server started on `port` is ready; empty: it accepts TCP
  // connections there. (A server on a Unix socket only says so otherwise.)
  using ReadyCheck = std::function<bool(int port)>;

  static constexpr std::chrono::milliseconds kDefaultReadyTimeout{5000};

  // Starts the server on a free port; a few ports are tried if one is taken in
  // the meantime. kUnavailable if it never accepts connections in time.
  static Result<std::unique_ptr<ServerProcess>> Start(
      std::string name, ArgvForPort argv_for_port,
      std::chrono::milliseconds ready_timeout = kDefaultReadyTimeout, ReadyCheck ready = {});

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess();

  const std::string& name() const { return name_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // "127.0.0.1:<port>".
  std::string address() const;

  // SIGTERM, up to 5 s of waiting, then SIGKILL. Idempotent.
  Status Stop();
  // SIGKILL and reap: the server dies without any goodbye.
  Status Kill();
  // SIGSTOP: the server keeps its sockets but answers nothing.
  Status Pause();
  // SIGCONT after Pause().
  Status Resume();
  // Stops the server if it runs, then starts it again on the same port.
  Status Restart();

 private:
  ServerProcess(std::string name, ArgvForPort argv_for_port,
                std::chrono::milliseconds ready_timeout, ReadyCheck ready);
  // Spawns on port_ and waits until it accepts connections or dies.
  Status Launch();
  Status Signal(int signo) const;

  std::string name_;
  ArgvForPort argv_for_port_;
  std::chrono::milliseconds ready_timeout_;
  ReadyCheck ready_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace cachet::test
