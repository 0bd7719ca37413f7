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

// `bytes` as one short line of printable text (its line end dropped), else
// empty: a server's refusal, never a piece of a value.
std::string_view OneShortLine(std::string_view bytes) {
  constexpr std::size_t kMostShown = 200;
  if (bytes.size() > kMostShown + 2) return {};
  while (!bytes.empty() && (bytes.back() == '\n' || bytes.back() == '\r')) bytes.remove_suffix(1);
  for (const char c : bytes) {
    if (c < 0x20 || c > 0x7e) return {};
  }
  return bytes;
}

}  // namespace

Status ExchangeState::SendFailure(Connection& connection, Status sent) {
  // A server that refuses a request may answer and hang up before taking all of
  // it; its answer waits on the socket, ahead of the reset that failed the send.
  // Quoted when it is all that waits there, one short line; never over TLS,
  // whose session may not be read after a failed write.
  if (!sent.IsIoError() || connection.tls() || !connection.buffer().empty() ||
      !connection.ReadSome().ok()) {
    return sent;
  }
  const std::string_view said = OneShortLine(connection.buffer().data());
  if (said.empty()) return sent;
  connection.MarkRefusedRequest();
  return Status::IoError(std::string(sent.message()) + "; the server's last reply: \"" +
                         std::string(said) + "\"");
}

Want ExchangeState::Fail(Connection& connection, Status why) {
  status_ = std::move(why);
  connection.Close();
  return want_ = Want::kDone;
}

Want ExchangeState::Expire(Connection& connection, Deadline now, Deadline deadline) {
  return Fail(connection, NoReply(connection, now, deadline));
}

Status ExchangeState::EarlyAnswer(Connection& connection) {
  connection.MarkRefusedRequest();
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
