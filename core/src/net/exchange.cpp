// ExchangeState's rare paths: failures, timeouts in the engine's words, and the
// lone driver's wait for room to send.
#include "cachet/net/exchange.h"

#include <string>

#include "cachet/net/poll_timeout.h"

namespace cachet::net {

namespace {

// The timeout of a server that did not answer by `now`: the call's `deadline`
// ran out, or the server was silent for io_timeout (or did not accept the connect).
Status NoReply(const Connection& connection, Deadline now, Deadline deadline) {
  if (now < deadline && connection.handshaking()) return connection.HandshakeTimeout();
  const char* why = now >= deadline           ? "no reply within the request timeout"
                    : connection.connecting() ? "connect timed out"
                                              : "no reply within the I/O timeout";
  return Status::Timeout(connection.Describe(why));
}

}  // namespace

Want ExchangeState::Fail(Connection& connection, Status why) {
  status_ = std::move(why);
  connection.Close();
  return want_ = Want::kDone;
}

Want ExchangeState::Expire(Connection& connection, Deadline now, Deadline deadline) {
  return Fail(connection, NoReply(connection, now, deadline));
}

Status ExchangeState::EarlyAnswer(const Connection& connection) {
  return Status::ProtocolError(
      connection.Describe("the server answered before the request was sent whole"));
}

Status ExchangeState::ReadFailure(const Connection& connection, Status read, Deadline deadline) {
  // Connection's own "read timed out" becomes the engine's wording.
  return read.IsTimeout() ? NoReply(connection, Clock::now(), deadline) : read;
}

Status ExchangeState::ReaderFailure(const Connection& connection, Status why) {
  if (why.message().find(connection.address().HostPort()) != std::string_view::npos) return why;
  return Status::FromCode(why.code(), connection.Describe(why.message()));
}

namespace exchange_detail {

Status AwaitSocket(const Connection& connection, short events, Deadline deadline, short* revents) {
  Status waited = AwaitEvents(connection, events, connection.WaitEnd(deadline), "wait", revents);
  // A timeout in the engine's words.
  return waited.IsTimeout() ? NoReply(connection, Clock::now(), deadline) : waited;
}

}  // namespace exchange_detail

}  // namespace cachet::net
