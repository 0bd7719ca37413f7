// TtListener (see tt_listener.h).
#include "tt_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tt_session.h"

namespace cachet::ttserver {

TtListener::~TtListener() {
  CloseAll();
  if (listen_fd_ >= 0) close(listen_fd_);
}

bool TtListener::Listen(int port, std::string* error) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 128) != 0) {
    *error = "bind 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
    return false;
  }
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  return true;
}

void TtListener::Run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 100) > 0) Accept();
    ReapFinished();
  }
  CloseAll();
}

void TtListener::Accept() {
  const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Connection& c = connections_.emplace_back();
  c.fd = fd;
  c.thread = std::thread([&c, this] {
    TtSession(c.fd, store_).Run();
    c.finished.store(true);
  });
}

void TtListener::ReapFinished() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->finished.load()) {
      ++it;
      continue;
    }
    it->thread.join();
    close(it->fd);
    it = connections_.erase(it);
  }
}

void TtListener::CloseAll() {
  // Shutting the sockets down wakes every session blocked in recv.
  for (Connection& c : connections_) shutdown(c.fd, SHUT_RDWR);
  for (Connection& c : connections_) {
    c.thread.join();
    close(c.fd);
  }
  connections_.clear();
}

}  // namespace cachet::ttserver
