// MemcachedBackend: the memcached store, over a ServerPool, in the text or the
// meta protocol.
//
// Layering: net::Connection -> net::ServerPool (placement, health, pooled
// connections) -> this backend, which checks keys and sizes before anything is
// sent and routes each operation; net::BatchRunner groups a batch by server and
// runs every server's share at once. A single operation skips the batch
// machinery: its command is built on the stack, the engine's lone call
// (net::RunAlone) sends it, and its reply is read by the same reader, a
// TextBatch or MetaBatch of one (memcached_single.cpp). The protocols live in
// text_batch / meta_batch (encoding in *_request, parsing in *_parser);
// replies map to Status in reply_status.
//
// Thread-safe: threads share one backend; each call borrows pooled connections.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/batch_runner.h"
#include "cachet/net/failover.h"
#include "cachet/net/server_pool.h"
#include "command_line.h"
#include "key_check.h"
#include "memcached_batch.h"
#include "reply.h"

namespace cachet::memcached {

enum class Protocol : std::uint8_t { kText, kMeta };

class OneMetaReplyReader;  // meta_lease.cpp

struct MemcachedOptions {
  std::vector<net::ServerAddress> servers;
  net::DistributionKind distribution = net::DistributionKind::kKetama;
  Protocol protocol = Protocol::kText;
  net::ServerPoolOptions pool;
  bool binary_keys = false;                 // meta only
  std::size_t max_item_size = 1024 * 1024;  // values larger are refused (too_large)
  std::uint32_t ketama_points = 160;        // cmf-ketama points per unit of weight
};

class MemcachedBackend final : public Backend {
 public:
  static constexpr Capabilities kCapabilities{
      Capability::kNativeTtl, Capability::kCas,        Capability::kAppendPrepend,
      Capability::kTouch,     Capability::kCounters,   Capability::kNativeFlags,
      Capability::kNoreply,   Capability::kPipelining, Capability::kFlush,
      Capability::kStats,     Capability::kGetAndTouch, Capability::kSecondTtl};

  // REQUIRES: options.servers is not empty.
  explicit MemcachedBackend(MemcachedOptions options);
  ~MemcachedBackend() override;

  std::string_view name() const noexcept override { return "memcached"; }
  // The meta protocol adds kNativeLease (the server's leases).
  Capabilities capabilities() const noexcept override {
    return options_.protocol == Protocol::kMeta ? kCapabilities.with(Capability::kNativeLease)
                                                : kCapabilities;
  }

  Status Get(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Touch(std::string_view key, Ttl ttl) override;
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out) override;
  // flush_all on every server; the first error, if any.
  Status Flush() override;
  // Every server's stats, each name prefixed with "host:port ".
  Status Stats(StatsMap* out) override;
  Status Health(std::vector<ServerHealth>* out) const override {
    pool_.AppendHealth(out);
    return Status::OK();
  }
  void Execute(std::span<Operation> batch) override;
  // "version": one reply line per server, "host:port <version>".
  Status Extension(std::string_view command, std::span<const std::string> args,
                   std::vector<std::string>* reply) override;
  // The meta protocol's leases (meta_lease.cpp); kUnsupported on text.
  // mg with N (vivify), R (recache) and the W/Z/X flags; md with I.
  Status LeaseGet(std::string_view key, const LeaseRequest& request, Item* out, LeaseGrant* grant,
                  std::uint64_t* lease_cas) override;
  Status EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end) override;

  const MemcachedOptions& options() const noexcept { return options_; }

 private:
  // The key, the value's size and the TTL, checked before anything is sent.
  Status Check(const Operation& op) const;
  // kTooLarge for a value of `size` bytes, over max_item_size.
  Status TooLargeError(std::size_t size) const;
  // True when the pool is one server and it is live: every key goes there.
  bool LoneLiveServer() const;
  // The pool's route: false (op.status says why) if it goes nowhere. `*home`
  // is the key's own server; `*server` differs from it only with failover.
  bool Route(Operation& op, std::size_t* server, std::size_t* home);
  // Check() and the route: false (op.status says why) if it goes nowhere.
  bool CheckAndRoute(Operation& op, std::size_t* server, std::size_t* home);
  // With failover, notes again a write that went to `server` rather than its
  // `home` once its exchange is over (net::Failover::NoteWriteAround).
  void NoteWriteAround(const Operation& op, std::size_t home, std::size_t server) {
    failover_->NoteWriteAround(op, home, server);
  }
  // After a single operation's exchange, the rare cases: a write that went
  // around its dead `home` (failover) is noted, an error reply names `server`.
  [[gnu::cold]] [[gnu::noinline]] void AfterUnusual(Operation& op, std::size_t home,
                                                   std::size_t server);
  // This thread's batch runner, claimed for this backend.
  net::BatchRunner& Runner() const;
  // Fills the batch in `slot` (made on first use, for `server`) with `ops`, in order.
  MemcachedBatch& FillBatch(std::size_t server, std::unique_ptr<net::ServerBatch>& slot,
                            std::span<Operation* const> ops, const BatchSettings& settings) const;
  // One operation: checked, routed, then sent alone (memcached_single.cpp).
  // A hit's item goes to `*hit`: op.result, or an Item the caller lends.
  Status RunOne(Operation& op, const BatchSettings& settings, Item* hit);
  // One operation through the batch machinery (a command line too long for
  // the single path), by `deadline`; settles op.status.
  void RunBatchOfOne(Operation& op, std::size_t server, const BatchSettings& settings, Item* hit,
                     net::Deadline deadline);
  void Run(std::span<Operation> ops, const BatchSettings& settings);
  // Run() once sets too large for the server have become deletes.
  void RunChecked(std::span<Operation> ops, const BatchSettings& settings);
  // Sends a text command to `servers`; `on_reply` sees each server's lines.
  Status RunOnServers(
      std::string_view command, std::span<const std::size_t> servers,
      const std::function<void(std::size_t server,
                               const std::vector<std::pair<std::string, std::string>>& lines)>&
          on_reply);
  // RunOnServers() on every server.
  Status RunOnEveryServer(
      std::string_view command,
      const std::function<void(std::size_t server,
                               const std::vector<std::pair<std::string, std::string>>& lines)>&
          on_reply);
  std::unique_ptr<MemcachedBatch> NewBatch() const;
  // Sends one meta command about `key` to its server and reads its one reply.
  // REQUIRES: `reader` holds the command's request.
  Status RunMetaCommand(std::string_view key, OneMetaReplyReader* reader);

  const std::uint64_t id_;  // BatchRunner::NewOwner(): claims this thread's runner
  MemcachedOptions options_;
  // The bound of one call (CallTimeout()), in the clock's unit: worked out once.
  net::Clock::duration call_timeout_;
  ParserLimits limits_;
  net::ServerPool pool_;
  // With failover and more than one server: routes around dead servers and
  // undoes what outages left behind.
  std::unique_ptr<net::Failover> failover_;
};

// The checks and the route every operation asks for, inline in the single operation's path.
inline Status MemcachedBackend::Check(const Operation& op) const {
  if (!KeyIsValid(op.key, options_.binary_keys)) return KeyError(op.key, options_.binary_keys);
  if (op.kind == OpKind::kStore && op.item.value.size() > options_.max_item_size) {
    return TooLargeError(op.item.value.size());
  }
  if (op.ttl.count() < 0) return NegativeTtlError("memcached");
  return Status::OK();
}

inline bool MemcachedBackend::LoneLiveServer() const {
  return pool_.size() == 1 && pool_.Available(0);
}

inline bool MemcachedBackend::CheckAndRoute(Operation& op, std::size_t* server,
                                            std::size_t* home) {
  op.status = Check(op);
  if (!op.status.ok()) [[unlikely]]
    return false;
  // One live server needs no placement, nor a Result to carry it.
  if (LoneLiveServer()) {
    *server = 0;
    *home = 0;
    return true;
  }
  return Route(op, server, home);
}

}  // namespace cachet::memcached
