// The one table from memcached reply kinds to Status codes.
#pragma once

#include "cachet/status.h"
#include "reply.h"

namespace cachet::memcached {

// ok for every success (STORED, DELETED, TOUCHED, OK, HD, a value, a number),
// not_found for a miss or NOT_FOUND/NF/EN, not_stored, exists; errors carry the
// server's message: ERROR -> protocol_error, CLIENT_ERROR -> invalid_argument,
// SERVER_ERROR -> too_large for "object too large", io_error otherwise.
Status StatusFromReply(const Reply& reply);

// True for ERROR, CLIENT_ERROR and SERVER_ERROR.
bool IsErrorReply(ReplyKind kind) noexcept;

}  // namespace cachet::memcached
