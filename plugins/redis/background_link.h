// BackgroundLink: the threads that keep the Redis store's background links up.
//
// Three parts of the store hold a connection open on a thread of their own and
// react to what the server pushes on it: the near cache's tracking links
// (InvalidationTracker, ClusterTracker) and the +switch-master subscription
// (SentinelWatcher). Each says what one frame on its link means (a LinkReader);
// what they share lives here, written once:
//   - the threads, and a stop signal (a pipe) that wakes them wherever they wait;
//   - Wait: until a socket is readable or closed, the stop signal, a nudge, or a
//     timeout, with a signal's EINTR waited through rather than taken as a timeout;
//   - KeepConnecting: an attempt at the link, again and again until stopped,
//     with a backoff between attempts that doubles up to a cap;
//   - Listen: the link loop. It hands every frame of the links to their readers
//     (what came with the link's answer first, before any wait) and keeps the
//     one health rule: after health_interval of silence a link gets a PING, and
//     a link silent for another interval after it is lost. A link the kernel
//     reports closed (FIN, RST) is lost at once, nothing more read from it;
//   - fork safety: a forked child has none of the threads, so destroying the
//     object there neither signals the parent's threads (the pipe is shared)
//     nor joins (it would wait forever); it only closes its own pipe copy.
// It lives in the plugin, not in core/net: no other store keeps a background
// link, and the stop/nudge semantics are the ones these three users need.
//
// A user starts its threads with Start(body), where body calls
// KeepConnecting(attempt) and the attempt, once its link is up, calls Listen;
// its destructor calls Stop() first, since the threads use the user's members.
//
// Thread safety: Wait, Nudge and stopping() may be called from any thread;
// Start and Stop only by the owner (never from a link thread).
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "cachet/net/connection.h"
#include "cachet/status.h"
#include "function_ref.h"
#include "resp_parser.h"

namespace cachet::redis {

// What a link's loop asks of the reader of one link: the meaning of each frame,
// and the count of PINGs it still owes a PONG for (it tells a PONG apart).
class LinkReader {
 public:
  virtual ~LinkReader() = default;
  // One whole frame of the link; an error loses the link.
  virtual Status Handle(RespValue frame) = 0;
  // A PING went out on the link: one more PONG is due.
  virtual void PingSent() noexcept = 0;
  virtual std::size_t pongs_due() const noexcept = 0;
};

// One link the link loop listens on (all borrowed): its connection, with the
// link's answer read (bytes after it may be in the buffer), the parser of its
// stream and its reader.
struct ListenedLink {
  net::Connection* connection;
  RespParser* parser;
  LinkReader* reader;
  std::string_view name;  // "tracking link", "sentinel link": for messages
};

// The pause before the next reconnect: `first`, doubled after every failed
// attempt up to `longest`, and `first` again once a link was up for `longest`
// at least (KeepConnecting).
class ReconnectBackoff {
 public:
  constexpr ReconnectBackoff(std::chrono::milliseconds first, std::chrono::milliseconds longest)
      : first_(first), longest_(longest), next_(first) {}

  // The pause to take now; the one after it is twice as long (at most `longest`).
  std::chrono::milliseconds Next() noexcept;
  // A link was up: the next pause is the shortest again.
  void Reset() noexcept { next_ = first_; }
  std::chrono::milliseconds longest() const noexcept { return longest_; }

 private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds longest_;
  std::chrono::milliseconds next_;
};

class BackgroundLink {
 public:
  // What ended a Wait.
  enum class Wake : std::uint8_t {
    kStop,      // Stop() was called: the thread returns
    kNudged,    // Nudge() was called: the thread looks again at what it follows
    kReadable,  // the socket has bytes (WaitAny: some socket has news, see revents)
    kClosed,    // the peer closed or reset the socket (FIN, RST, an error)
    kTimeout,   // the time was up
    kFailed,    // poll() itself failed (errno says why)
  };

  // What one attempt at the link came to; decides the pause before the next.
  enum class Attempt : std::uint8_t {
    kFailed,    // no link came up: pause, and the backoff doubles
    kWasUp,     // a link was up and is lost: pause the shortest backoff
    kRetryNow,  // a link was up and must be made again at once (what it follows moved)
  };

  // `backoff`: the reconnect timings each thread's KeepConnecting starts from.
  explicit BackgroundLink(ReconnectBackoff backoff);
  ~BackgroundLink();  // Stop()
  BackgroundLink(const BackgroundLink&) = delete;
  BackgroundLink& operator=(const BackgroundLink&) = delete;

  // Starts a thread running `body`, which returns once stopping().
  void Start(std::function<void()> body);
  // Sets stopping(), wakes every thread and joins them; in a forked child only
  // releases them (see above). Then closes the pipe. Idempotent.
  void Stop();
  bool stopping() const noexcept { return stopping_.load(); }
  // False in a forked child, which has none of the threads.
  bool InOwnerProcess() const noexcept;

  // Wakes a waiting thread with kNudged, without stopping it (REQUIRES: before
  // Stop). A nudge while no one waits ends the next Wait.
  void Nudge() noexcept;

  // Runs `attempt` until stopped, pausing between attempts as each asks: the
  // body of a link thread. A nudge ends a pause early.
  void KeepConnecting(FunctionRef<Attempt()> attempt);

  // Waits for `fd` (or nothing, with -1) to be readable or closed, the stop
  // signal, a nudge, or `timeout`.
  Wake Wait(int fd, std::chrono::milliseconds timeout);
  // The same for several sockets: each entry's fd is set by the caller, events
  // and revents here; kReadable and kClosed are then read from each revents
  // (Readiness), and are left set after kNudged too.
  Wake WaitAny(std::span<pollfd> fds, std::chrono::milliseconds timeout);
  // kReadable, kClosed, or kTimeout (nothing happened) for one polled socket.
  static Wake Readiness(const pollfd& fd) noexcept;

  // The link loop: hands every frame on `links` to its reader until a link is
  // lost (it is closed, and why is returned), `moved()` says what the links
  // follow has moved (ok: a nudge makes it look), or Stop() (unavailable).
  // Health as described above; `every_interval` runs once per health_interval
  // (the cluster's slot map check). REQUIRES: links not empty.
  Status Listen(std::span<const ListenedLink> links, std::chrono::milliseconds health_interval,
                FunctionRef<bool()> moved, FunctionRef<void()> every_interval);
  // The same for links that follow nothing and check nothing else.
  Status Listen(std::span<const ListenedLink> links, std::chrono::milliseconds health_interval);

 private:
  // poll() on all[0] (the stop pipe) and the rest, waiting through EINTR.
  Wake Poll(pollfd* all, std::size_t count, std::chrono::milliseconds timeout);
  void Signal() noexcept;  // one byte into the pipe: a full pipe already wakes
  void DrainSignal() noexcept;

  const ReconnectBackoff backoff_;
  int wake_[2] = {-1, -1};  // read end polled by every Wait; written by Nudge and Stop
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;  // Stop() has run (owner only)
  std::vector<std::thread> threads_;
  const pid_t owner_pid_;  // the process whose threads these are
};

}  // namespace cachet::redis
