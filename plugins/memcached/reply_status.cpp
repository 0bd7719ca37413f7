// Memcached reply kinds mapped one-to-one onto Status codes.
#include "reply_status.h"

#include <string>

namespace cachet::memcached {

namespace {

StatusCode CodeOf(const Reply& reply) {
  // The one refinement: the server's "object too large" is a size limit, not an
  // I/O failure.
  if (reply.kind == ReplyKind::kServerError &&
      reply.text.find("too large") != std::string_view::npos) {
    return StatusCode::kTooLarge;
  }
  return CodeOfKind(reply.kind);
}

}  // namespace

bool IsErrorReply(ReplyKind kind) noexcept {
  return kind == ReplyKind::kError || kind == ReplyKind::kClientError ||
         kind == ReplyKind::kServerError;
}

Status StatusFromReply(const Reply& reply, std::string_view server) {
  StatusCode code = CodeOf(reply);
  if (code == StatusCode::kOk) return Status::OK();
  if (!IsErrorReply(reply.kind)) return Status::FromCode(code, {});
  std::string message = "memcached";
  if (!server.empty()) message.append(" ").append(server);
  message += ": ";
  message += reply.kind == ReplyKind::kError         ? "ERROR (unknown command)"
             : reply.kind == ReplyKind::kClientError ? "CLIENT_ERROR "
                                                     : "SERVER_ERROR ";
  message += reply.text;
  return Status::FromCode(code, message);
}

}  // namespace cachet::memcached
