// posix_spawn with three pipes, driven by poll() until the child closes its
// output or the deadline passes.
#include "run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

extern char** environ;

namespace cachet::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxCapture = 64u << 20;  // per stream

struct Pipes {
  std::array<int, 2> in{-1, -1}, out{-1, -1}, err{-1, -1};
};

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

pid_t Spawn(const std::vector<std::string>& argv, Pipes& p) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, p.in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, p.out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, p.err[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Reads what is ready on `fd` into `sink`; closes `fd` at end of file.
void Drain(int& fd, std::string& sink) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0 && sink.size() < kMaxCapture) sink.append(buffer, static_cast<std::size_t>(n));
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) CloseFd(fd);
}

// Feeds `input` and collects the outputs until both close or `until` passes.
bool Pump(Pipes& p, const std::string& input, CommandOutcome& outcome, Clock::time_point until) {
  std::size_t written = 0;
  if (input.empty()) CloseFd(p.in[1]);
  // Bounded by the deadline: every pass waits at most 100 ms.
  while ((p.out[0] >= 0 || p.err[0] >= 0) && Clock::now() < until) {
    std::array<pollfd, 3> fds{
        {{p.in[1], POLLOUT, 0}, {p.out[0], POLLIN, 0}, {p.err[0], POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) return false;
    if (p.in[1] >= 0 && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(p.in[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 || written == input.size()) CloseFd(p.in[1]);
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) Drain(p.out[0], outcome.out);
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) Drain(p.err[0], outcome.err);
  }
  return p.out[0] < 0 && p.err[0] < 0;
}

}  // namespace

CommandOutcome RunCommand(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::seconds deadline) {
  CommandOutcome outcome;
  Pipes p;
  if (::pipe2(p.in.data(), O_CLOEXEC) != 0 || ::pipe2(p.out.data(), O_CLOEXEC) != 0 ||
      ::pipe2(p.err.data(), O_CLOEXEC) != 0) {
    return outcome;
  }
  const pid_t pid = Spawn(argv, p);
  CloseFd(p.in[0]);
  CloseFd(p.out[1]);
  CloseFd(p.err[1]);
  // A child that exits without reading its stdin must not kill us with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  const bool finished = pid > 0 && Pump(p, input, outcome, Clock::now() + deadline);
  for (int* fd : {&p.in[1], &p.out[0], &p.err[0]}) CloseFd(*fd);
  if (pid <= 0) return outcome;
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  }
  return outcome;
}

}  // namespace cachet::test
