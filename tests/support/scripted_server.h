// ScriptedServer: a fake server on a loopback port that answers requests from a
// script, for tests of what a client does with replies no real server sends:
// one reply too many, bytes arriving while a connection sits idle, a reply that
// trickles in slower than the I/O timeout allows in total, a hang-up.
//
// A RequestFramer says where the first whole request in the received bytes ends
// (RESP arrays, memcached text lines with their data blocks), so each request is
// answered by the script's next step, whatever it asks. A connection the client
// closes is followed by the next one it makes; when the script has been played
// the server closes its listener. Every wait is bounded by a poll timeout.
//
// Thread-safe as far as tests need: the server runs on its own thread; the test
// reads port(), connections() and requests() (under a lock) at any time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace cachet::test {

// The length of the first whole request at the front of `pending`, or 0 when
// more bytes are needed.
using RequestFramer = std::function<std::size_t(std::string_view pending)>;

// RESP requests: arrays of bulk strings, as every Redis client sends them.
RequestFramer RespRequests();
// memcached text requests: a line, and for storage commands the data block it
// announces (unless the line ends in noreply, which changes nothing here).
RequestFramer MemcachedTextRequests();

struct ScriptStep {
  // A step is usually written as a braced list: {reply}, {reply, piece, pause},
  // or {reply, 0, {}, late, late_after}.
  ScriptStep(std::string reply_bytes, std::size_t piece_bytes = 0,
             std::chrono::milliseconds piece_pause = {}, std::string late_bytes = {},
             std::chrono::milliseconds late_delay = {}, bool hang_up_after = false)
      : reply(std::move(reply_bytes)),
        piece(piece_bytes),
        pause(piece_pause),
        late(std::move(late_bytes)),
        late_after(late_delay),
        hang_up(hang_up_after) {}

  std::string reply;  // sent once the request has arrived
  // When set, the reply goes out in pieces of `piece` bytes with `pause`
  // between them (a large value arriving slowly but steadily).
  std::size_t piece;
  std::chrono::milliseconds pause;
  // Bytes nobody asked for, sent `late_after` after the reply, while the
  // client's connection is idle.
  std::string late;
  std::chrono::milliseconds late_after;
  bool hang_up;  // close the connection after this step
};

class ScriptedServer {
 public:
  ScriptedServer(RequestFramer framer, std::vector<ScriptStep> script);
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  int port() const { return port_; }
  // Connections accepted so far.
  int connections() const { return connections_.load(); }
  // The requests received so far, in order.
  std::vector<std::string> requests() const;
  // Waits (at most 5 s) until the whole script was played.
  bool WaitUntilPlayed() const;
  // Waits (at most 5 s) until the first `steps` steps were played, late bytes
  // included: over loopback they are then in the client's socket.
  bool WaitUntilStepsPlayed(std::size_t steps) const;

 private:
  void Serve();
  // Plays steps on one connection until the script ends or the client hangs up.
  void ServeConnection(int fd);
  bool NextRequest(int fd, std::string* pending, std::string* request);

  RequestFramer framer_;
  std::vector<ScriptStep> script_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<std::size_t> next_{0};
  mutable std::mutex mutex_;  // guards requests_
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace cachet::test
