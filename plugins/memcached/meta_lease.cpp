// MemcachedBackend::LeaseGet and EndLease: GetOrCompute's lease through the
// server's own (meta protocol only). `mg KEY v f c N<lease>` reads the key and,
// on a miss, creates an empty placeholder that lives `lease`: the first client
// gets W (it loads), the later ones Z (they wait). Storing the value replaces
// the placeholder; a winner that gives up deletes it, so the next mg wins.
#include <string>

#include "exptime.h"
#include "memcached_backend.h"
#include "meta_parser.h"
#include "meta_request.h"
#include "reply_status.h"

namespace cachet::memcached {

// Sends a single meta command (`request`, borrowed, sent with O0) for `key`
// and reads its one reply, copying what it needs out of the connection's
// buffer. The reply must be one the command gets (`fits`), with its O token
// and, when returned and not base64, the key; anything else is protocol_error,
// and an error line (it carries no token) is the outcome: either way the
// connection is dropped. The caller reads the exchange's status from the
// runner, the reply's from outcome() and the reply from reply().
class OneMetaReplyReader final : public net::ServerBatch {
 public:
  using Fits = bool (*)(ReplyKind);
  OneMetaReplyReader(const net::RequestBuffer& request, ParserLimits limits, std::string_view key,
                     bool binary_key, Fits fits)
      : request_(request), parser_(limits), key_(binary_key ? std::string_view() : key),
        fits_(fits) {}

  void Request(std::vector<iovec>* out) const override { request_.Iovecs(out); }
  void Settle(const Status&) override {}
  bool poisoned() const noexcept override { return poisoned_; }

  Status Consume(net::ReadBuffer& buffer) override {
    if (done_) return Status::ProtocolError("memcached: bytes after the reply");
    Reply parsed_reply;
    ParseResult parsed = parser_.Parse(buffer.data(), &parsed_reply);
    if (parsed.outcome == ParseOutcome::kNeedMore) return Status::OK();
    if (parsed.outcome == ParseOutcome::kError) return parsed.error;
    if (Status s = Check(parsed_reply); !s.ok()) return s;
    reply_ = parsed_reply;
    data_.assign(parsed_reply.data);
    reply_.data = data_;
    reply_.key = {};
    reply_.text = {};
    outcome_ = StatusFromReply(parsed_reply);
    poisoned_ = IsErrorReply(reply_.kind);
    buffer.Consume(parsed.consumed);
    done_ = true;
    if (!buffer.empty()) return Status::ProtocolError("memcached: bytes after the reply");
    return Status::OK();
  }
  bool done() const noexcept override { return done_; }

  const Reply& reply() const noexcept { return reply_; }
  const Status& outcome() const noexcept { return outcome_; }

 private:
  Status Check(const Reply& reply) const {
    if (IsErrorReply(reply.kind) && !reply.has_opaque) return Status::OK();
    if (!fits_(reply.kind)) {
      return Status::ProtocolError("memcached: a meta reply that does not fit the command");
    }
    if (!reply.has_opaque || reply.opaque != 0) {
      return Status::ProtocolError("memcached: meta reply with a missing or unknown O token");
    }
    if (!reply.key.empty() && !key_.empty() && !MetaKeyNames(reply.key, reply.key_base64, key_)) {
      return Status::ProtocolError("memcached: a meta reply for another key");
    }
    return Status::OK();
  }

  const net::RequestBuffer& request_;
  MetaReplyParser parser_;
  std::string_view key_;  // empty: not compared (base64 on the wire)
  Fits fits_;
  bool done_ = false;
  bool poisoned_ = false;
  Reply reply_;
  std::string data_;  // reply_.data points here
  Status outcome_;
};

Status MemcachedBackend::RunMetaCommand(std::string_view key, OneMetaReplyReader* reader) {
  Operation op;
  op.kind = OpKind::kGet;
  op.key = key;
  std::size_t server = 0;
  std::size_t home = 0;
  if (!CheckAndRoute(op, &server, &home)) return op.status;
  net::BatchRunner& runner = Runner();
  runner.Enlist(pool_, server, *reader);
  if (!runner.Run(pool_.CallDeadline())) return runner.status(0);
  return reader->outcome();
}

Status MemcachedBackend::LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                                  LeaseGrant* grant, std::uint64_t* lease_cas) {
  *grant = LeaseGrant::kNone;
  *lease_cas = 0;
  if (options_.protocol != Protocol::kMeta) {
    return Backend::LeaseGet(key, request, out, grant, lease_cas);
  }
  if (request.lease.count() < 0 || request.recache_below.count() < 0) {
    return NegativeTtlError("memcached");
  }
  MetaTokens tokens;
  tokens.binary_key = options_.binary_keys;
  net::RequestBuffer request_bytes;
  // N0 would keep the placeholder for good: a lease lasts at least a second.
  const std::int64_t exptime = request.lease.count() > 0 ? ExptimeFor(request.lease) : 1;
  AppendMetaLeaseGet(request_bytes, key, tokens, exptime, RecacheFor(request.recache_below));
  OneMetaReplyReader reader(request_bytes, limits_, key, options_.binary_keys, [](ReplyKind kind) {
    return kind == ReplyKind::kMetaValue || kind == ReplyKind::kMetaMiss;
  });
  if (Status s = RunMetaCommand(key, &reader); !s.ok()) return s;
  const Reply& reply = reader.reply();
  if (reply.win) {
    *grant = LeaseGrant::kWon;
    *lease_cas = reply.cas;  // EndLease deletes or marks only this very item
  } else if (reply.win_taken) {
    *grant = LeaseGrant::kHeld;
  }
  if (IsLeasePlaceholder(reply)) return Status::NotFound();
  out->value.assign(reply.data);
  out->flags = reply.flags;
  out->cas = reply.cas;
  return Status::OK();
}

Status MemcachedBackend::EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end) {
  if (options_.protocol != Protocol::kMeta) return Backend::EndLease(key, ticket, end);
  // A stored value replaced the placeholder, and a new item has a new token.
  if (end == LeaseEnd::kKept) return Status::OK();
  // No token (a server run with CAS off, -C): nothing proves the item there is
  // still this lease's, so it is left alone; a placeholder lapses with its lease.
  if (ticket.cas == 0) return Status::OK();
  MetaTokens tokens;
  tokens.binary_key = options_.binary_keys;
  net::RequestBuffer request;
  // A placeholder goes (the next mg N vivifies and wins); a present item is
  // marked stale with I, which keeps it and gives the next mg a new W. Both
  // with C<cas>: an item that changed since the win (the placeholder lapsed
  // and another client won a new one, or stored a value) answers EX and stays.
  AppendMetaDelete(request, key, tokens, end == LeaseEnd::kAbandonRefresh, ticket.cas);
  OneMetaReplyReader reader(request, limits_, key, options_.binary_keys, [](ReplyKind kind) {
    return kind == ReplyKind::kMetaHeader || kind == ReplyKind::kNotFound ||
           kind == ReplyKind::kExists;
  });
  Status s = RunMetaCommand(key, &reader);
  return s.IsNotFound() || s.IsExists() ? Status::OK() : s;
}

}  // namespace cachet::memcached
