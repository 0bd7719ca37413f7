// SocketStream: buffered, blocking reads and batched writes on one connected
// socket, for the test server's sessions.
//
// Replies are collected and sent when the session is about to wait for more
// input, so a pipeline of requests gets its replies back in few writes, in
// order. Not thread-safe; one per connection. Does not own the descriptor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cachet::ttserver {

class SocketStream {
 public:
  explicit SocketStream(int fd) : fd_(fd) { input_.resize(64 * 1024); }

  // False on end of stream or a socket error.
  bool ReadByte(std::uint8_t* out);
  bool ReadInt32(std::int32_t* out);
  bool ReadInt64(std::int64_t* out);
  bool ReadBytes(std::size_t n, std::string* out);

  void WriteByte(std::uint8_t b) { output_.push_back(static_cast<char>(b)); }
  void WriteInt32(std::int32_t v);
  void WriteInt64(std::int64_t v);
  void WriteBytes(std::string_view bytes) { output_.append(bytes); }
  // Sends what was written. False when the peer is gone.
  bool Flush();

 private:
  // Makes at least one byte available; flushes replies first when it must wait.
  bool Fill();
  bool ReadExact(char* dst, std::size_t n);

  int fd_;
  std::vector<char> input_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::string output_;
};

}  // namespace cachet::ttserver
