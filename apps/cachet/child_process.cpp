// fork, exec and a pipe for the child's stdout; no shell is involved, so the
// command's arguments reach it exactly as given.
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace cachet::cli {

namespace {

Status Errno(const char* what) {
  return Status::IoError(std::string(what) + ": " + std::strerror(errno));
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecChild(int write_end, bool null_stdin, char* const* argv) {
  if (::dup2(write_end, STDOUT_FILENO) < 0) ::_exit(127);
  ::close(write_end);
  if (null_stdin) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) ::_exit(127);
    ::close(null_fd);
  }
  ::execvp(argv[0], argv);
  const char* reason = std::strerror(errno);
  const char prefix[] = "cachet fetch: cannot run ";
  (void)!::write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
  (void)!::write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
  (void)!::write(STDERR_FILENO, ": ", 2);
  (void)!::write(STDERR_FILENO, reason, std::strlen(reason));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(127);  // not exit(): the parent's buffers must not be flushed twice
}

}  // namespace

Status RunCapturingStdout(const std::vector<std::string>& argv, bool null_stdin, std::string* out,
                          int* exit_code) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe");
  std::fflush(nullptr);  // what the client buffered must not reach the child's stdout
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Errno("fork");
  }
  if (pid == 0) ExecChild(fds[1], null_stdin, args.data());
  ::close(fds[1]);

  char buffer[65536];
  Status read_status;
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      out->append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      read_status = Errno("read from the command");
      break;
    }
  }
  ::close(fds[0]);

  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return Errno("waitpid");
  }
  if (!read_status.ok()) return read_status;
  if (WIFEXITED(wait_status)) {
    *exit_code = WEXITSTATUS(wait_status);
  } else {
    *exit_code = 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
  }
  return Status::OK();
}

}  // namespace cachet::cli
