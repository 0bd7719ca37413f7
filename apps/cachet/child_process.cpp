// fork, exec and a pipe for the child's stdout; no shell is involved, so the
// command's arguments reach it exactly as given. A second pipe, closed by a
// successful exec (O_CLOEXEC), brings back the errno of a child that could not
// start, so the parent words the error: the child calls only async-signal-safe
// functions between fork and exec.
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

// In the child, between fork and exec: only async-signal-safe calls. Any
// failure sends errno through `error_pipe` and exits 127.
[[noreturn]] void ExecChild(int stdout_pipe, int error_pipe, bool null_stdin, char* const* argv) {
  bool ready = ::dup2(stdout_pipe, STDOUT_FILENO) >= 0;
  if (ready && null_stdin) {
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // dup2 clears the flag on 0
    ready = null_fd >= 0 && ::dup2(null_fd, STDIN_FILENO) >= 0;
  }
  if (ready) ::execvp(argv[0], argv);  // returns only on failure
  const int failure = errno;
  (void)!::write(error_pipe, &failure, sizeof failure);
  ::_exit(127);  // not exit(): the parent's buffers must not be flushed twice
}

// Closes `fd` (if open) and marks it closed.
void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

// Reads up to `size` bytes, retrying on EINTR: > 0 read, 0 at the end, < 0 error.
ssize_t ReadSome(int fd, void* buffer, std::size_t size) {
  ssize_t n;
  do {
    n = ::read(fd, buffer, size);
  } while (n < 0 && errno == EINTR);
  return n;
}

// Waits for `pid` to end; its wait status in `*wait_status`.
Status Reap(pid_t pid, int* wait_status) {
  while (::waitpid(pid, wait_status, 0) < 0) {
    if (errno != EINTR) return Errno("waitpid");
  }
  return Status::OK();
}

// The errno a child sent through the error pipe before it exited, or 0 when
// the pipe closed empty (exec succeeded).
int StartFailure(int error_pipe) {
  int failure = 0;
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(&failure);
  while (got < sizeof failure) {
    const ssize_t n = ReadSome(error_pipe, bytes + got, sizeof failure - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got == sizeof failure ? failure : 0;
}

}  // namespace

Status RunCapturingStdout(const std::vector<std::string>& argv, bool null_stdin,
                          std::size_t max_output, std::string* out, ChildOutcome* outcome) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  int output[2];
  int errors[2];
  if (::pipe2(output, O_CLOEXEC) != 0) return Errno("pipe");
  if (::pipe2(errors, O_CLOEXEC) != 0) {
    const Status failed = Errno("pipe");
    ::close(output[0]);
    ::close(output[1]);
    return failed;
  }
  std::fflush(nullptr);  // what the client buffered must not reach the child's stdout
  const pid_t pid = ::fork();
  if (pid < 0) {
    const Status failed = Errno("fork");
    for (int fd : {output[0], output[1], errors[0], errors[1]}) ::close(fd);
    return failed;
  }
  if (pid == 0) ExecChild(output[1], errors[1], null_stdin, args.data());
  ::close(output[1]);
  ::close(errors[1]);
  int read_end = output[0];

  const int failure = StartFailure(errors[0]);
  ::close(errors[0]);
  int wait_status = 0;
  if (failure != 0) {
    CloseFd(&read_end);
    if (Status s = Reap(pid, &wait_status); !s.ok()) return s;
    outcome->exit_code = 127;
    outcome->start_error = "cannot run " + argv[0] + ": " + std::strerror(failure);
    return Status::OK();
  }

  char buffer[65536];
  std::size_t captured = 0;
  Status read_status;
  // Bounded: each pass reads something, or ends at the end of the output, an
  // error, or max_output.
  for (;;) {
    const ssize_t n = ReadSome(read_end, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      read_status = Errno("read from the command");
      break;
    }
    if (static_cast<std::size_t>(n) > max_output - captured) {
      // Nothing this large is cached: stop the command rather than wait for
      // an output that may never end. A grandchild still writing gets EPIPE.
      ::kill(pid, SIGKILL);
      read_status = Status::TooLarge("the command wrote more than " + std::to_string(max_output) +
                                     " bytes (max_value_size): nothing was cached");
      break;
    }
    out->append(buffer, static_cast<std::size_t>(n));
    captured += static_cast<std::size_t>(n);
  }
  CloseFd(&read_end);
  if (Status s = Reap(pid, &wait_status); !s.ok()) return s;
  if (!read_status.ok()) return read_status;
  if (WIFEXITED(wait_status)) {
    outcome->exit_code = WEXITSTATUS(wait_status);
  } else {
    outcome->exit_code = 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
  }
  return Status::OK();
}

}  // namespace cachet::cli
