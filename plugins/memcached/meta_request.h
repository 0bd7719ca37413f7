// Meta protocol requests (mg ms md ma mn), appended to a RequestBuffer. No I/O,
// no checks: keys and values must have passed key_check.h and the size limit.
//
// Every request carries O<opaque> (the operation's index in its batch) so replies
// match by token, and q where a suppressed reply is unambiguous; a batch ends
// with mn, whose MN says every earlier reply has arrived.
#pragma once

#include <cstdint>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/request_buffer.h"

namespace cachet::memcached {

using net::RequestBuffer;

struct MetaTokens {
  std::uint32_t opaque = 0;
  bool quiet = false;       // q: routine replies are not sent; errors still are
  bool binary_key = false;  // the key is raw bytes, sent base64 with b
};

// mg <key> v f c [T<exptime>]: a read (and touch). With want_value false and a
// touch, only HD/EN come back (touch).
void AppendMetaGet(RequestBuffer& out, std::string_view key, const MetaTokens& tokens,
                   bool want_value, bool touch, std::int64_t exptime);
// mg <key> v f c N<exptime> [R<recache>]: a read that, on a miss, creates an
// empty placeholder living `exptime` and gives the first client W, the next
// ones Z; with `recache` > 0, a present item with fewer seconds left than that
// gives W to one client too.
void AppendMetaLeaseGet(RequestBuffer& out, std::string_view key, const MetaTokens& tokens,
                        std::int64_t exptime, std::int64_t recache);
// ms <key> <size> F<flags> T<exptime> [C<cas>] [M<mode>] + data.
void AppendMetaSet(RequestBuffer& out, StoreMode mode, std::string_view key, ItemView item,
                   std::int64_t exptime, const MetaTokens& tokens);
// md <key> [I] [C<cas>]: with `invalidate`, the item is kept, marked stale
// (the next mg gets X and W) instead of deleted; with a `compare_cas` other
// than 0, only if the item's CAS is still that (else EX).
void AppendMetaDelete(RequestBuffer& out, std::string_view key, const MetaTokens& tokens,
                      bool invalidate = false, std::uint64_t compare_cas = 0);
// ma <key> D<delta> [MD] [v]: the new value comes back unless quiet.
void AppendMetaArithmetic(RequestBuffer& out, bool decrement, std::string_view key,
                          std::uint64_t delta, const MetaTokens& tokens);
void AppendMetaNoop(RequestBuffer& out);

// Standard base64 with padding (what memcached's b flag decodes).
void AppendBase64(RequestBuffer& out, std::string_view raw);

}  // namespace cachet::memcached
