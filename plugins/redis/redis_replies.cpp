// The reply-to-Status table of the redis plugin.
#include "redis_replies.h"

#include <cctype>
#include <charconv>
#include <string>
#include <system_error>

#include "redis_session.h"

namespace cachet::redis {

namespace {

Status ErrorOr(RespValue reply, std::string_view where, Status otherwise) {
  if (reply.IsError()) return StatusFromError(reply.text(), where);
  return otherwise;
}

Status Unexpected(RespValue reply, std::string_view where) {
  return ErrorOr(reply, where,
                 Status::ProtocolError("redis " + std::string(where) + ": unexpected " +
                                       std::string(RespTypeName(reply.type())) + " reply"));
}

// Whether `error` is one a PING may get itself: a state of the server's that
// refuses most commands (MISCONF: writes and PING, after a failed save), or a
// denial of the ping command by name (an ACL, a rename).
bool RefusesPing(std::string_view error) {
  for (std::string_view state : {"LOADING", "BUSY", "MASTERDOWN", "NOAUTH", "MISCONF"}) {
    if (StartsWithWord(error, state)) return true;
  }
  std::string lower(error);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.starts_with("err unknown command 'ping'") ||
         (lower.starts_with("noperm") && lower.find("'ping' command") != std::string::npos);
}

}  // namespace

Status ReadValue(RespValue reply, std::string_view where, Item* out) {
  if (reply.IsNull()) return Status::NotFound();
  // A stored value always comes as a bulk string; a status line (+OK) is the
  // answer to some other command, never a value.
  if (reply.type() != RespType::kBulkString) return Unexpected(reply, where);
  StoreValue(reply.text(), out);
  return Status::OK();
}

Status ReadStored(RespValue reply, std::string_view where) {
  if (reply.IsNull()) return Status::NotStored();
  // Only OK: another status line (a PONG) is some other command's answer.
  if (reply.type() == RespType::kSimpleString && reply.text() == "OK") return Status::OK();
  return Unexpected(reply, where);
}

Status ReadOneOrZero(RespValue reply, std::string_view where, Status on_zero) {
  if (reply.type() != RespType::kInteger) return Unexpected(reply, where);
  return reply.integer() > 0 ? Status::OK() : on_zero;
}

Status ReadCounter(RespValue reply, std::string_view where, std::uint64_t* value) {
  if (reply.type() == RespType::kInteger) {
    *value = static_cast<std::uint64_t>(reply.integer());
    return Status::OK();
  }
  if (reply.IsNull()) return Status::NotFound();
  if (!reply.IsString()) return Unexpected(reply, where);
  std::string_view text = reply.text();
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::ProtocolError("redis " + std::string(where) + ": counter reply is not a number");
  }
  return Status::OK();
}

Status ReadCasOutcome(RespValue reply, std::string_view where) {
  if (reply.IsNull()) return Status::NotFound();
  return ReadOneOrZero(reply, where, Status::Exists());
}

Status ReadNotError(RespValue reply, std::string_view where) {
  return ErrorOr(reply, where, Status::OK());
}

Status ReadTouched(RespValue reply, std::string_view where, bool sends_expiry) {
  if (sends_expiry) return ReadOneOrZero(reply, where, Status::NotFound());
  // GETEX answers the value: a bulk string, or nil for a missing key.
  if (reply.IsNull()) return Status::NotFound();
  return reply.type() == RespType::kBulkString ? Status::OK() : Unexpected(reply, where);
}

Status ReadClosingPong(RespValue reply, std::string_view where, std::string_view closes) {
  if (reply.type() == RespType::kSimpleString && reply.text() == "PONG") return Status::OK();
  if (reply.IsError() && RefusesPing(reply.text())) return Status::OK();
  std::string got(RespTypeName(reply.type()));
  if (reply.IsError() || reply.type() == RespType::kSimpleString) {
    got += " '" + std::string(reply.text().substr(0, 60)) + "'";
  }
  return Status::ProtocolError("redis " + std::string(where) + ": a reply too many in " +
                               std::string(closes) + ": " + got +
                               " where the PONG that closes it was expected");
}

}  // namespace cachet::redis
