// ScriptedServer: request framing, and playing the script on each connection.
#include "support/scripted_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <utility>

#include "launchers/server_process.h"

namespace cachet::test {

namespace {

constexpr int kWaitMs = 3000;  // the longest any wait of the server lasts

bool Readable(int fd, int timeout_ms = kWaitMs) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

void Send(int fd, std::string_view bytes) {
  // A client that went away is no concern of a fake server.
  [[maybe_unused]] ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

// The decimal number in `text`, or -1.
long long Number(std::string_view text) {
  long long value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() ? value : -1;
}

// The line at `from` (without its CRLF) and where the next one starts; false
// when the line is not whole yet.
bool LineAt(std::string_view bytes, std::size_t from, std::string_view* line, std::size_t* next) {
  const std::size_t end = bytes.find("\r\n", from);
  if (end == std::string_view::npos) return false;
  *line = bytes.substr(from, end - from);
  *next = end + 2;
  return true;
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    if (space != 0) words.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return words;
}

}  // namespace

RequestFramer RespRequests() {
  return [](std::string_view pending) -> std::size_t {
    std::string_view line;
    std::size_t at = 0;
    if (!LineAt(pending, 0, &line, &at) || line.empty() || line[0] != '*') return 0;
    const long long count = Number(line.substr(1));
    for (long long i = 0; i < count; ++i) {
      if (!LineAt(pending, at, &line, &at) || line.empty() || line[0] != '$') return 0;
      const long long length = Number(line.substr(1));
      if (length < 0 || pending.size() < at + static_cast<std::size_t>(length) + 2) return 0;
      at += static_cast<std::size_t>(length) + 2;
    }
    return at;
  };
}

RequestFramer MemcachedTextRequests() {
  return [](std::string_view pending) -> std::size_t {
    std::string_view line;
    std::size_t at = 0;
    if (!LineAt(pending, 0, &line, &at)) return 0;
    const std::vector<std::string_view> words = Words(line);
    if (words.empty()) return at;
    long long data = -1;
    const std::string_view command = words[0];
    if ((command == "set" || command == "add" || command == "replace" || command == "append" ||
         command == "prepend" || command == "cas") &&
        words.size() >= 5) {
      data = Number(words[4]);
    } else if (command == "ms" && words.size() >= 3) {
      data = Number(words[2]);
    }
    if (data < 0) return at;
    const std::size_t end = at + static_cast<std::size_t>(data) + 2;
    return pending.size() >= end ? end : 0;
  };
}

ScriptedServer::ScriptedServer(RequestFramer framer, std::vector<ScriptStep> script)
    : framer_(std::move(framer)), script_(std::move(script)) {
  listener_ = ListenOnLoopback(8, &port_);
  if (listener_ >= 0) thread_ = std::thread([this] { Serve(); });
}

ScriptedServer::~ScriptedServer() {
  if (thread_.joinable()) thread_.join();
  if (listener_ >= 0) ::close(listener_);
}

std::vector<std::string> ScriptedServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool ScriptedServer::WaitUntilPlayed() const { return WaitUntilStepsPlayed(script_.size()); }

bool ScriptedServer::WaitUntilStepsPlayed(std::size_t steps) const {
  for (int i = 0; i < 500 && next_.load() < steps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return next_.load() >= steps;
}

bool ScriptedServer::NextRequest(int fd, std::string* pending, std::string* request) {
  for (int reads = 0; reads < 100000; ++reads) {
    if (const std::size_t size = framer_(*pending); size > 0) {
      *request = pending->substr(0, size);
      pending->erase(0, size);
      return true;
    }
    char chunk[65536];
    const ssize_t n = Readable(fd) ? ::recv(fd, chunk, sizeof chunk, 0) : 0;
    if (n <= 0) return false;  // the client hung up, or went quiet
    pending->append(chunk, static_cast<std::size_t>(n));
  }
  return false;
}

void ScriptedServer::ServeConnection(int fd) {
  std::string pending;
  std::string request;
  while (next_.load() < script_.size() && NextRequest(fd, &pending, &request)) {
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    const ScriptStep& step = script_[next_.load()];
    const std::string_view reply = step.reply;
    if (step.piece == 0) {
      Send(fd, reply);
    } else {
      for (std::size_t at = 0; at < reply.size(); at += step.piece) {
        if (at > 0) std::this_thread::sleep_for(step.pause);
        Send(fd, reply.substr(at, step.piece));
      }
    }
    if (!step.late.empty()) {
      std::this_thread::sleep_for(step.late_after);
      Send(fd, step.late);
    }
    ++next_;
    if (step.hang_up) return;
  }
}

void ScriptedServer::Serve() {
  for (int accepted = 0; accepted < 100 && next_.load() < script_.size() && Readable(listener_);
       ++accepted) {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) continue;
    ++connections_;
    ServeConnection(fd);
    ::close(fd);
  }
}

}  // namespace cachet::test
