// ExchangeState: one request and its replies on one connection, as a resumable
// state machine.
//
// The machine never waits: each step does what the socket allows right now
// (send what it takes, take what arrived, feed it to the reader) and answers
// what the exchange waits for next:
//
//   kWrite  request bytes remain: wait for room to send (and, while the reader
//           still expects replies, read those that arrive meanwhile, so a large
//           pipeline never deadlocks; a write-only request reads nothing);
//   kRead   the request went out: wait for bytes;
//   kDone   over; status() says how (ok, or why it failed).
//
// Whoever waits is the driver: it waits for Events() (over TLS not always the
// obvious one: the connection may need to send before it reads on, or to
// receive before it writes) and hands poll()'s answer to Ready(). Two are in
// core: RunExchanges (fan_out.h), one poll() loop over several servers, and
// RunLoneExchange below, one exchange on its own (a single operation): once
// the request is out it waits with one blocking recv() bounded by io_timeout
// and the call's deadline, without poll() on the usual path; a request larger
// than the socket takes waits for room with poll(), as above. An event loop
// can drive it the same way.
//
// The rules live here, once, whatever drives the exchange:
//   - any failure closes the connection, so the next use starts clean;
//   - a server silent for io_timeout is a timeout "no reply within the I/O
//     timeout" ("... request timeout" once the call's deadline passed);
//   - an exchange still under way past the call's deadline is a timeout "no
//     reply within the request timeout", however steadily bytes arrive
//     (Overdue: io_timeout bounds silence, the deadline bounds the call);
//   - an exchange never ends ok with request bytes unsent: a reply that ends
//     the reader before the request went out whole is a protocol error (the
//     server would take the next request as the rest of this one);
//   - a reader that is done is never fed: bytes waiting while a write-only
//     request is sent stay on the socket, for the pool's idle check;
//   - bytes left after the last reply the reader expected are a protocol
//     error (nobody's answer: the connection cannot be trusted again), unless
//     the reader keeps them (KeepsRest: a subscription's messages).
//
// The reader is the store's parser, fed bytes, with no I/O of its own: any
// type with `Status Consume(ReadBuffer&)` (consume every complete reply at the
// front; an error ends the exchange) and `bool done() const` (no more replies
// expected; Consume is only called while !done()), such as net::ReplyReader
// (fan_out.h). The steps are templates over
// it, so a store that knows its reader's type reads the usual reply without a
// virtual call.
#pragma once

#include <poll.h>
#include <sys/uio.h>

#include <cstdint>
#include <utility>

#include "cachet/export.h"
#include "cachet/net/connection.h"
#include "cachet/status.h"

namespace cachet::net {

// A reader whose last reply opens a link rather than ends an exchange (the
// answer to a SUBSCRIBE): the bytes after it are the link's, not leftover. It
// says so with `static constexpr bool kKeepsRest = true;`. Only the templated
// steps with the concrete type honour it (the lone driver on a dedicated link);
// under RunExchanges the reader is a ReplyReader, and such bytes are leftover.
template <class Reader>
concept KeepsRest = requires {
  requires Reader::kKeepsRest;
};

// What an exchange waits for after a step.
enum class Want : std::uint8_t { kWrite, kRead, kDone };

class CACHET_EXPORT ExchangeState {
 public:
  // Starts an exchange of `count` request pieces at `request` (advanced as they
  // are sent; the bytes stay the caller's) on a connected connection.
  void Begin(iovec* request, int count) noexcept {
    unsent_ = request;
    unsent_count_ = count;
    want_ = count > 0 ? Want::kWrite : Want::kRead;
  }

  Want want() const noexcept { return want_; }
  // How the exchange ended (ok until then).
  const Status& status() const noexcept { return status_; }
  Status TakeStatus() noexcept { return std::move(status_); }

  // Step: the socket may have room. Sends what it takes now.
  template <class Reader>
  Want Write(Connection& connection, Reader& reader) {
    Status sent = connection.WriteSome(&unsent_, &unsent_count_);
    if (!sent.ok()) [[unlikely]]
      return Fail(connection, SendFailure(connection, std::move(sent)));
    if (unsent_count_ > 0) return want_ = Want::kWrite;
    if (reader.done()) [[unlikely]]
      return Finish<Reader>(connection);  // nothing to read back (a write-only request)
    return want_ = Want::kRead;
  }

  // Step: bytes may have arrived. Takes them without waiting and feeds them on;
  // a reader that expects nothing (a write-only request) reads nothing.
  // `deadline` is the call's end (max(): none), as in Received().
  template <class Reader>
  Want Read(Connection& connection, Reader& reader, Deadline deadline = Deadline::max()) {
    if (reader.done()) [[unlikely]]
      return want_;
    return Received(connection, reader, connection.ReadSome(), deadline);
  }

  // Step: the driver read into connection.buffer() itself (a blocking read)
  // with outcome `read`. `deadline` is the call's end: it words a timeout, and
  // a reply still unfinished past it ends the exchange (Overdue), however
  // steadily its bytes arrive.
  template <class Reader>
  Want Received(Connection& connection, Reader& reader, Status read, Deadline deadline) {
    if (!read.ok()) [[unlikely]]
      return Fail(connection, ReadFailure(connection, std::move(read), deadline));
    if (Status consumed = reader.Consume(connection.buffer()); !consumed.ok()) [[unlikely]]
      return Fail(connection, ReaderFailure(connection, std::move(consumed)));
    if (reader.done()) return Finish<Reader>(connection);
    return deadline == Deadline::max() ? want_ : Overdue(connection, Clock::now(), deadline);
  }

  // Step: the driver's wait ended at `now` with nothing to do: a timeout,
  // against the call's `deadline` or the server's silence.
  Want Expire(Connection& connection, Deadline now, Deadline deadline);

  // Step: the driver's clock says `now`. An exchange still under way past the
  // call's `deadline` ends as a timeout ("... request timeout"), however busy
  // its server keeps it: io_timeout bounds silence, the deadline the call.
  Want Overdue(Connection& connection, Deadline now, Deadline deadline) {
    if (want_ != Want::kDone && now >= deadline) [[unlikely]]
      return Expire(connection, now, deadline);
    return want_;
  }

  // The poll() events this exchange waits for on `connection` (0 once done):
  // room to send while request bytes remain, and bytes meanwhile unless the
  // reader expects none (a write-only request); bytes once the request is out.
  // Over TLS the connection may need the other event first (a read that must
  // send, a write that must receive): Connection::ReadEvents()/WriteEvents().
  template <class Reader>
  short Events(const Connection& connection, const Reader& reader) const {
    switch (want_) {
      case Want::kWrite:
        return reader.done()
                   ? connection.WriteEvents()
                   : static_cast<short>(connection.WriteEvents() | connection.ReadEvents());
      case Want::kRead:
        return connection.ReadEvents();
      case Want::kDone:
        break;
    }
    return 0;
  }

  // Step: poll() answered `revents` to Events() at `now`. Sends if the write
  // can go on, reads if the read can (a hang-up or an error shows in the
  // read, or in the write of a write-only request), then ends the exchange if
  // it is still under way past the call's `deadline` (Overdue).
  template <class Reader>
  Want Ready(Connection& connection, Reader& reader, short revents, Deadline now,
             Deadline deadline) {
    constexpr short kTrouble = POLLHUP | POLLERR;
    const bool write_only = reader.done();
    const short write_on = connection.WriteEvents() | (write_only ? kTrouble : 0);
    if (want_ == Want::kWrite && (revents & write_on)) Write(connection, reader);
    if (want_ != Want::kDone && !write_only && (revents & (connection.ReadEvents() | kTrouble))) {
      Read(connection, reader, deadline);
    }
    return Overdue(connection, now, deadline);
  }

  // Ends the exchange with `why`, closing the connection.
  Want Fail(Connection& connection, Status why);

 private:
  // Every reply arrived: bytes after them are nobody's answer (unless the
  // reader keeps them for the link it opened), and so are they if part of the
  // request was never sent.
  template <class Reader>
  Want Finish(Connection& connection) {
    if (unsent_count_ > 0) [[unlikely]]
      return Fail(connection, EarlyAnswer(connection));
    if constexpr (!KeepsRest<Reader>) {
      if (!connection.buffer().empty()) [[unlikely]]
        return Fail(connection, connection.LeftoverError());
    }
    return want_ = Want::kDone;
  }
  // A failed send's status, with the server's last reply line if it answered
  // before it hung up (a refusal of a too large request, say).
  static Status SendFailure(Connection& connection, Status sent);
  // The protocol error of a server that answered before the request was whole:
  // it refused the request (Connection::refused_request()).
  static Status EarlyAnswer(Connection& connection);
  // A failed read's status; a timeout in the engine's words.
  static Status ReadFailure(const Connection& connection, Status read, Deadline deadline);
  // A reader's error, naming the server as the engine's own errors do (unless
  // the store's reader named it already).
  static Status ReaderFailure(const Connection& connection, Status why);

  iovec* unsent_ = nullptr;
  int unsent_count_ = 0;
  Want want_ = Want::kDone;
  Status status_;
};

// Whether a request may be sent again after the server closed the pooled
// connection it went out on before any byte of an answer came (its close of an
// idle connection crossing the reuse): kYes for one that only reads, which
// runs as well twice. A write is never sent again: it may have run.
enum class Repeatable : bool { kNo, kYes };

// True when an exchange on a pooled connection failed that way: an I/O failure
// (the server's close, a reset, a broken pipe) with nothing received since the
// buffer counted `received_before`.
inline bool ClosedUnanswered(const Status& status, const Connection& connection,
                             std::uint64_t received_before) noexcept {
  return status.IsIoError() && connection.buffer().received() == received_before;
}

namespace exchange_detail {

// Waits until `connection`'s socket is ready for `events` (POLLOUT and/or
// POLLIN), for io_timeout at most and never past `deadline`: ok with
// `*revents` set, or the timeout or poll() failure, in the engine's words.
CACHET_EXPORT Status AwaitSocket(const Connection& connection, short events, Deadline deadline,
                                 short* revents);

// The lone driver's rare step: request bytes remain, so it waits for room (and
// reads what arrives meanwhile, unless the reader expects nothing: then it only
// sends, and an error on the socket shows in the write), as the poll loop does
// (Events, Ready). Out of line: the usual request goes out whole.
template <class Reader>
[[gnu::noinline]] Want AwaitRoom(ExchangeState& state, Connection& connection, Reader& reader,
                                 Deadline deadline) {
  short revents = 0;
  Status ready = AwaitSocket(connection, state.Events(connection, reader), deadline, &revents);
  if (!ready.ok()) return state.Fail(connection, std::move(ready));
  return state.Ready(connection, reader, revents, Clock::now(), deadline);
}

}  // namespace exchange_detail

// The lone driver: runs `state` (begun, its first step taken, which said
// `want`) to its end on its own. Each wait for the server ends after the
// connection's io_timeout of silence, or at `deadline` (the call's end).
// `start` is the clock reading the exchange began at: while the first read
// follows a send that did not wait, it spares the read a clock reading.
template <class Reader>
inline void DriveAlone(ExchangeState& state, Want want, Connection& connection, Reader& reader,
                       Clock::time_point start, Deadline deadline) {
  for (bool fresh = true; want != Want::kDone; fresh = false) {
    if (want == Want::kWrite) [[unlikely]] {
      want = exchange_detail::AwaitRoom(state, connection, reader, deadline);
      continue;
    }
    Status read = fresh ? connection.ReadMore(deadline, start) : connection.ReadMore(deadline);
    want = state.Received(connection, reader, std::move(read), deadline);
  }
}

// One exchange on its own, from its first send: `count` request pieces at
// `request` on a connected `connection`, its replies fed to `reader`. `start`
// is the clock reading `deadline` was computed from, just before the call.
// Returns ok once `reader` is done; any failure closes the connection.
template <class Reader>
inline Status RunLoneExchange(Connection& connection, iovec* request, int count, Reader& reader,
                              Clock::time_point start, Deadline deadline) {
  ExchangeState state;
  state.Begin(request, count);
  const Want want = state.Write(connection, reader);
  DriveAlone(state, want, connection, reader, start, deadline);
  return state.TakeStatus();
}

}  // namespace cachet::net
