// How Redis replies become Statuses and values: the one mapping table of the
// plugin, shared by single calls and pipelined batches.
//   nil reply            -> kNotFound (a miss), or kNotStored after SET NX/XX
//   integer 0 (DEL, PEXPIRE, scripts) -> kNotFound / kNotStored (kExists for cas)
//   error reply          -> StatusFromError (redis_session.h)
//   any other type where a specific one was expected -> kProtocolError
#pragma once

#include <cstdint>
#include <string_view>

#include "cachet/backend.h"
#include "resp_reply.h"

namespace cachet::redis {

// GET / GETEX: the value into `*out`, or a miss.
Status ReadValue(RespValue reply, std::string_view where, Item* out);
// A read's value bytes into `*out` (flags and cas 0), as ReadValue stores them.
// clear() and append() are assign() without its allowance for a source inside
// the string, which a reply's bytes never are: fewer steps per read.
inline void StoreValue(std::string_view bytes, Item* out) {
  out->value.clear();
  out->value.append(bytes);
  out->flags = 0;
  out->cas = 0;
}
// SET with NX or XX: OK, or nil for a failed condition.
Status ReadStored(RespValue reply, std::string_view where);
// Commands answering 1 or 0: 0 is `on_zero`.
Status ReadOneOrZero(RespValue reply, std::string_view where, Status on_zero);
// INCRBY / DECRBY: the new value, negative ones as two's complement; the
// counter script: the new value as decimal text, nil for a missing key.
Status ReadCounter(RespValue reply, std::string_view where, std::uint64_t* value);
// The cas script: 1 stored, 0 kExists (the token changed), nil kNotFound.
Status ReadCasOutcome(RespValue reply, std::string_view where);
// Any reply but an error is success.
Status ReadNotError(RespValue reply, std::string_view where);
// A touch: PEXPIRE's 1 or 0 when it `sends_expiry`, else GETEX ... PERSIST's
// value (touched) or nil (a miss).
Status ReadTouched(RespValue reply, std::string_view where, bool sends_expiry);
// The reply to the PING that closes a pipeline (a batch, a login, ASKING and its
// command), which `closes` names: ok for PONG, or for an error PING itself may
// get (the server loading, busy with a script, a replica cut off from its
// master, a login missing, an ACL or a rename that denies PING), when the
// pipeline's own replies stand. Anything else is another command's reply, sent
// twice or late: a protocol error that names it.
Status ReadClosingPong(RespValue reply, std::string_view where, std::string_view closes);

}  // namespace cachet::redis
