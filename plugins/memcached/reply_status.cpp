// Memcached reply kinds mapped one-to-one onto Status codes.
#include "reply_status.h"

#include <string>

namespace cachet::memcached {

namespace {

struct Row {
  ReplyKind kind;
  StatusCode code;
};

constexpr Row kTable[] = {
    {ReplyKind::kValue, StatusCode::kOk},
    {ReplyKind::kEnd, StatusCode::kNotFound},
    {ReplyKind::kStored, StatusCode::kOk},
    {ReplyKind::kNotStored, StatusCode::kNotStored},
    {ReplyKind::kExists, StatusCode::kExists},
    {ReplyKind::kNotFound, StatusCode::kNotFound},
    {ReplyKind::kDeleted, StatusCode::kOk},
    {ReplyKind::kTouched, StatusCode::kOk},
    {ReplyKind::kOk, StatusCode::kOk},
    {ReplyKind::kNumber, StatusCode::kOk},
    {ReplyKind::kVersion, StatusCode::kOk},
    {ReplyKind::kStat, StatusCode::kOk},
    {ReplyKind::kMetaValue, StatusCode::kOk},
    {ReplyKind::kMetaHeader, StatusCode::kOk},
    {ReplyKind::kMetaMiss, StatusCode::kNotFound},
    {ReplyKind::kMetaNoop, StatusCode::kOk},
    {ReplyKind::kError, StatusCode::kProtocolError},
    {ReplyKind::kClientError, StatusCode::kInvalidArgument},
    {ReplyKind::kServerError, StatusCode::kIoError},
};

StatusCode CodeOf(const Reply& reply) {
  // The one refinement: the server's "object too large" is a size limit, not an
  // I/O failure.
  if (reply.kind == ReplyKind::kServerError &&
      reply.text.find("too large") != std::string_view::npos) {
    return StatusCode::kTooLarge;
  }
  for (const Row& row : kTable) {
    if (row.kind == reply.kind) return row.code;
  }
  return StatusCode::kInternal;
}

}  // namespace

bool IsErrorReply(ReplyKind kind) noexcept {
  return kind == ReplyKind::kError || kind == ReplyKind::kClientError ||
         kind == ReplyKind::kServerError;
}

Status StatusFromReply(const Reply& reply) {
  StatusCode code = CodeOf(reply);
  if (code == StatusCode::kOk) return Status::OK();
  if (!IsErrorReply(reply.kind)) return Status::FromCode(code, {});
  std::string message = "memcached: ";
  message += reply.kind == ReplyKind::kError         ? "ERROR (unknown command)"
             : reply.kind == ReplyKind::kClientError ? "CLIENT_ERROR "
                                                     : "SERVER_ERROR ";
  message += reply.text;
  return Status::FromCode(code, message);
}

}  // namespace cachet::memcached
