// The reply-to-Status table of the redis plugin.
#include "redis_replies.h"

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
  if (reply.type() == RespType::kSimpleString) return Status::OK();
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

}  // namespace cachet::redis
