// Meta protocol requests (mg ms md ma mn), appended to a RequestBuffer (a batch)
// or a CommandLine (a single operation): each encoder is a template over the two,
// instantiated for both in meta_request.cpp. No I/O, no checks: keys and values
// must have passed key_check.h and the size limit.
//
// Every request carries O<opaque> (the operation's index in its batch) so replies
// match by token, and q where a suppressed reply is unambiguous; a batch ends
// with mn, whose MN says every earlier reply has arrived.
#pragma once

#include <cstdint>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/request_buffer.h"
#include "command_line.h"

namespace cachet::memcached {

using net::RequestBuffer;

struct MetaTokens {
  std::uint32_t opaque = 0;
  bool quiet = false;       // q: routine replies are not sent; errors still are
  bool binary_key = false;  // the key is raw bytes, sent base64 with b
};

// mg <key> v f c [k] [T<exptime>]: a read (and touch), k unless the key is binary.
// With want_value false and a touch, only HD/EN come back (touch).
template <class Out>
void AppendMetaGet(Out& out, std::string_view key, const MetaTokens& tokens, bool want_value,
                   bool touch, std::int64_t exptime);
// mg <key> v f c [k] N<exptime> [R<recache>]: a read that, on a miss, creates an
// empty placeholder living `exptime` and gives the first client W, the next
// ones Z; with `recache` > 0, a present item with fewer seconds left than that
// gives W to one client too.
template <class Out>
void AppendMetaLeaseGet(Out& out, std::string_view key, const MetaTokens& tokens,
                        std::int64_t exptime, std::int64_t recache);
// ms <key> <size> F<flags> T<exptime> [C<cas>] [M<mode>] + data.
template <class Out>
void AppendMetaSet(Out& out, StoreMode mode, std::string_view key, ItemView item,
                   std::int64_t exptime, const MetaTokens& tokens);
// md <key> [I] [C<cas>]: with `invalidate`, the item is kept, marked stale
// (the next mg gets X and W) instead of deleted; with a `compare_cas` other
// than 0, only if the item's CAS is still that (else EX).
template <class Out>
void AppendMetaDelete(Out& out, std::string_view key, const MetaTokens& tokens,
                      bool invalidate = false, std::uint64_t compare_cas = 0);
// ma <key> D<delta> [MD] [v]: the new value comes back unless quiet.
template <class Out>
void AppendMetaArithmetic(Out& out, bool decrement, std::string_view key, std::uint64_t delta,
                          const MetaTokens& tokens);
template <class Out>
void AppendMetaNoop(Out& out);

// The command of one operation, with `tokens`: the one switch from an operation
// to its meta command, for a batch and a single operation alike. A get also
// touches, to `get_touch_exptime`, when `touch_on_get`.
template <class Out>
void AppendMetaOperation(Out& out, const Operation& op, const MetaTokens& tokens, bool touch_on_get,
                         std::int64_t get_touch_exptime);

// Standard base64 with padding (what memcached's b flag decodes).
template <class Out>
void AppendBase64(Out& out, std::string_view raw);

// Whether a meta reply's key (k) names `key`, a text key: memcached returns the
// key of an item stored with b (by a client with binary_keys) base64-encoded.
bool MetaKeyNames(std::string_view answered, bool answered_base64, std::string_view key);

}  // namespace cachet::memcached
