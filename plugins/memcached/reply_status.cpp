// Memcached reply kinds mapped one-to-one onto Status codes.
#include "reply_status.h"

#include <string>
#include <string_view>

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

constexpr std::string_view kUnnamed = "memcached: ";

// The start of an error reply's message: "memcached host:port: ", or
// "memcached: " without a server.
std::string MessageStart(std::string_view server) {
  if (server.empty()) return std::string(kUnnamed);
  return "memcached " + std::string(server) + ": ";
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
  std::string message = MessageStart(server);
  message += reply.kind == ReplyKind::kError         ? "ERROR (unknown command)"
             : reply.kind == ReplyKind::kClientError ? "CLIENT_ERROR "
                                                     : "SERVER_ERROR ";
  message += reply.text;
  return Status::FromCode(code, message);
}

Status NamingServer(Status status, std::string_view server) {
  if (!status.IsError() || !status.message().starts_with(kUnnamed)) return status;
  const std::string_view rest = status.message().substr(kUnnamed.size());
  return Status::FromCode(status.code(), MessageStart(server) + std::string(rest));
}

}  // namespace cachet::memcached
