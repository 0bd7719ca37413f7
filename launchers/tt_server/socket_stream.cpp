// SocketStream (see socket_stream.h).
#include "socket_stream.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cachet::ttserver {
namespace {

std::uint64_t FromBigEndian(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

bool SocketStream::Fill() {
  if (begin_ < end_) return true;
  if (!Flush()) return false;
  begin_ = end_ = 0;
  for (;;) {
    const ssize_t n = recv(fd_, input_.data(), input_.size(), 0);
    if (n > 0) {
      end_ = static_cast<std::size_t>(n);
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool SocketStream::ReadExact(char* dst, std::size_t n) {
  while (n > 0) {
    if (!Fill()) return false;
    const std::size_t take = std::min(n, end_ - begin_);
    std::memcpy(dst, input_.data() + begin_, take);
    begin_ += take;
    dst += take;
    n -= take;
  }
  return true;
}

bool SocketStream::ReadByte(std::uint8_t* out) {
  return ReadExact(reinterpret_cast<char*>(out), 1);
}

bool SocketStream::ReadInt32(std::int32_t* out) {
  unsigned char b[4];
  if (!ReadExact(reinterpret_cast<char*>(b), 4)) return false;
  *out = static_cast<std::int32_t>(static_cast<std::uint32_t>(FromBigEndian(b, 4)));
  return true;
}

bool SocketStream::ReadInt64(std::int64_t* out) {
  unsigned char b[8];
  if (!ReadExact(reinterpret_cast<char*>(b), 8)) return false;
  *out = static_cast<std::int64_t>(FromBigEndian(b, 8));
  return true;
}

bool SocketStream::ReadBytes(std::size_t n, std::string* out) {
  out->resize(n);
  return ReadExact(out->data(), n);
}

void SocketStream::WriteInt32(std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  for (int shift = 24; shift >= 0; shift -= 8) WriteByte(static_cast<std::uint8_t>(u >> shift));
}

void SocketStream::WriteInt64(std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  for (int shift = 56; shift >= 0; shift -= 8) WriteByte(static_cast<std::uint8_t>(u >> shift));
}

bool SocketStream::Flush() {
  std::size_t sent = 0;
  while (sent < output_.size()) {
    const ssize_t n = send(fd_, output_.data() + sent, output_.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  output_.clear();
  return true;
}

}  // namespace cachet::ttserver
