// The one table from memcached reply kinds to Status codes.
#pragma once

#include "cachet/status.h"
#include "reply.h"

namespace cachet::memcached {

// The code of each reply kind: ok for every success (STORED, DELETED, TOUCHED,
// OK, HD, a value, a number), not_found for a miss or NOT_FOUND/NF/EN,
// not_stored, exists; ERROR -> protocol_error, CLIENT_ERROR -> invalid_argument,
// SERVER_ERROR -> io_error (StatusFromReply refines "object too large").
// Inline: a single command's usual reply asks, once.
constexpr StatusCode CodeOfKind(ReplyKind kind) noexcept {
  switch (kind) {
    case ReplyKind::kEnd:
    case ReplyKind::kNotFound:
    case ReplyKind::kMetaMiss:
      return StatusCode::kNotFound;
    case ReplyKind::kNotStored:
      return StatusCode::kNotStored;
    case ReplyKind::kExists:
      return StatusCode::kExists;
    case ReplyKind::kError:
      return StatusCode::kProtocolError;
    case ReplyKind::kClientError:
      return StatusCode::kInvalidArgument;
    case ReplyKind::kServerError:
      return StatusCode::kIoError;
    case ReplyKind::kValue:
    case ReplyKind::kStored:
    case ReplyKind::kDeleted:
    case ReplyKind::kTouched:
    case ReplyKind::kOk:
    case ReplyKind::kNumber:
    case ReplyKind::kVersion:
    case ReplyKind::kStat:
    case ReplyKind::kMetaValue:
    case ReplyKind::kMetaHeader:
    case ReplyKind::kMetaNoop:
      return StatusCode::kOk;
  }
  return StatusCode::kInternal;
}

// The reply's Status: its kind's code; errors carry the server's message, and
// SERVER_ERROR is too_large for "object too large". Its message starts
// "memcached host:port: ", or "memcached: " when `server` is empty.
Status StatusFromReply(const Reply& reply, std::string_view server = {});

// `status` as StatusFromReply would have made it with `server`, when it was
// made without (a reader shared by every server): its message then names it.
Status NamingServer(Status status, std::string_view server);

// True for ERROR, CLIENT_ERROR and SERVER_ERROR.
bool IsErrorReply(ReplyKind kind) noexcept;

}  // namespace cachet::memcached
