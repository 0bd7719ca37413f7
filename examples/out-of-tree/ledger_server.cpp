// A ledger server (the protocol is described in ledger_plugin.cpp) that serves
// for as long as one command runs, so a CTest test brings its own server:
//
//   ledger_server [--stale-reply] CONFIG_IN CONFIG_OUT -- COMMAND [ARGS...]
//
// It listens on a free loopback port, writes CONFIG_IN to CONFIG_OUT with
// @PORT@ replaced by that port, runs COMMAND, serves every connection in one
// poll loop until COMMAND exits, and exits with COMMAND's status. With
// --stale-reply, the first get once two keys are stored is answered with
// another key's value first, as a reply left over from an earlier request
// would be: the client must not take it for this key's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t kMaxLine = 1024;
constexpr std::size_t kMaxValue = 16 << 20;

// A client's connection: the bytes of requests not yet whole.
struct Client {
  int fd;
  std::string input;
};

// Answers every whole request at the front of `input` into `output`; false
// after a request it cannot read (then `output` ends with an error line).
// `*stale` (--stale-reply) is cleared once the stale reply went out.
bool Serve(std::string& input, std::string& output, std::map<std::string, std::string>& data,
           bool* stale) {
  for (;;) {
    const std::size_t end = input.find("\r\n");
    if (end == std::string::npos) return input.size() <= kMaxLine;
    std::istringstream words(input.substr(0, end));
    std::string command, key, size_text;
    words >> command >> key >> size_text;
    std::size_t used = end + 2;
    if (command == "get" && !key.empty() && size_text.empty()) {
      if (*stale && data.size() >= 2) {
        const auto other = data.begin()->first != key ? data.begin() : std::next(data.begin());
        output += "value " + std::to_string(other->second.size()) + "\r\n" + other->second + "\r\n";
        *stale = false;
      }
      auto it = data.find(key);
      output += it == data.end() ? "miss\r\n"
                                 : "value " + std::to_string(it->second.size()) + "\r\n" +
                                       it->second + "\r\n";
    } else if (command == "del" && !key.empty() && size_text.empty()) {
      output += data.erase(key) == 1 ? "ok\r\n" : "miss\r\n";
    } else if ((command == "set" || command == "add" || command == "replace") && !key.empty()) {
      std::size_t size = 0;
      const auto [last, error] =
          std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
      if (error != std::errc() || last != size_text.data() + size_text.size() || size > kMaxValue) {
        output += "error bad length\r\n";
        return false;
      }
      if (input.size() < used + size + 2) return true;  // the value is still arriving
      if (input.compare(used + size, 2, "\r\n") != 0) {
        output += "error value not followed by CRLF\r\n";
        return false;
      }
      const bool present = data.count(key) == 1;
      if ((command == "add" && present) || (command == "replace" && !present)) {
        output += "not_stored\r\n";
      } else {
        data[key] = input.substr(used, size);
        output += "ok\r\n";
      }
      used += size + 2;
    } else {
      output += "error unknown request\r\n";
      return false;
    }
    input.erase(0, used);
  }
}

// Sends all of `bytes`; false when the client went away.
bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

int Listen(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::perror("ledger_server: listen");
    return -1;
  }
  *port = ntohs(address.sin_port);
  return fd;
}

bool WriteConfig(const char* in, const char* out, int port) {
  std::ifstream source(in);
  std::stringstream text;
  text << source.rdbuf();
  std::string config = text.str();
  const std::string marker = "@PORT@";
  for (std::size_t at; (at = config.find(marker)) != std::string::npos;) {
    config.replace(at, marker.size(), std::to_string(port));
  }
  std::ofstream target(out);
  target << config;
  return source.good() && static_cast<bool>(target.flush());
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = argv[0];
  bool stale = argc > 1 && std::string_view(argv[1]) == "--stale-reply";
  if (stale) {
    --argc;
    ++argv;
  }
  if (argc < 5 || std::string_view(argv[3]) != "--") {
    std::fprintf(stderr, "usage: %s [--stale-reply] CONFIG_IN CONFIG_OUT -- COMMAND [ARGS...]\n",
                 program);
    return 2;
  }
  int port = 0;
  const int listener = Listen(&port);
  if (listener < 0 || !WriteConfig(argv[1], argv[2], port)) return 2;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(listener);
    ::execvp(argv[4], argv + 4);
    std::perror("ledger_server: exec");
    ::_exit(127);
  }
  std::map<std::string, std::string> data;
  std::vector<Client> clients;
  // Bounded: until the command exits, or 30 minutes at the most.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(30);
  while (std::chrono::steady_clock::now() < give_up) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd >= 0) clients.push_back({fd, {}});
    }
    for (std::size_t i = fds.size() - 1; i >= 1; --i) {
      if (fds[i].revents == 0) continue;
      Client& c = clients[i - 1];
      char bytes[65536];
      const ssize_t got = ::recv(c.fd, bytes, sizeof bytes, 0);
      if (got < 0 && errno == EINTR) continue;  // polled again next turn
      std::string output;
      bool open = got > 0;  // 0: the client hung up
      if (open) {
        c.input.append(bytes, static_cast<std::size_t>(got));
        open = Serve(c.input, output, data, &stale);
      }
      if (!SendAll(c.fd, output) || !open) {
        ::close(c.fd);
        clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i - 1));
      }
    }
  }
  std::fprintf(stderr, "ledger_server: the command ran past 30 minutes\n");
  ::kill(child, SIGKILL);
  return 1;
}
