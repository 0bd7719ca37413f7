// TokyoTyrantBackend: Tokyo Tyrant servers on one ring, over the binary protocol.
//
// Layering: net::Connection -> net::ServerPool (placement by the configured
// distribution, health, pooled connections) -> this backend, which checks keys
// and sizes before anything is sent and routes each operation; net::BatchRunner
// groups a batch by server and runs every server's share at once. Encoding is in tt_request,
// parsing in tt_reply_parser, the operation mapping in tt_batch.
//
// Tokyo Tyrant has no TTL, flags or CAS: the core's envelope emulates TTL and
// flags. replace, prepend, cas and touch cannot be done atomically over this
// protocol and are unsupported. Incr/Decr (addint) and append (putcat) are
// opt-in because their semantics differ from the generic API's (see
// docs/tokyotyrant.md). The Tokyo Tyrant-only commands go through Extension().
//
// Thread-safe: threads share one backend; each call borrows pooled connections.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/batch_runner.h"
#include "cachet/net/failover.h"
#include "cachet/net/server_pool.h"
#include "tt_batch.h"
#include "tt_options.h"

namespace cachet::tokyotyrant {

class TokyoTyrantBackend final : public Backend {
 public:
  // What every Tokyo Tyrant backend can do; addint_counters adds kCounters.
  static constexpr Capabilities kCapabilities{Capability::kPersistence, Capability::kNoreply,
                                              Capability::kPipelining, Capability::kFlush,
                                              Capability::kStats};

  // REQUIRES: options.servers is not empty.
  explicit TokyoTyrantBackend(TokyoTyrantOptions options);
  ~TokyoTyrantBackend() override;

  std::string_view name() const noexcept override { return "tokyotyrant"; }
  Capabilities capabilities() const noexcept override;

  Status Get(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  // vanish on every server.
  Status Flush() override;
  // stat of every server, each name prefixed with "host:port ".
  Status Stats(StatsMap* out) override;
  Status Health(std::vector<ServerHealth>* out) const override {
    pool_.AppendHealth(out);
    return Status::OK();
  }
  void Execute(std::span<Operation> batch) override;
  // Tokyo Tyrant-only commands; see tt_extension.cpp and docs/tokyotyrant.md.
  Status Extension(std::string_view command, std::span<const std::string> args,
                   std::vector<std::string>* reply) override;

 private:
  friend class ExtensionRunner;

  // The reason `op` cannot be sent, or ok.
  Status Check(const Operation& op) const;
  // The pool's route of `op`, under failover's rule when it is on: false
  // (op.status says why) if it goes nowhere. `*home` is the key's own server;
  // `*server` differs from it only with failover.
  bool Route(Operation& op, std::size_t* server, std::size_t* home);
  // With failover, notes again a write that went to `server` rather than its
  // `home`, once its exchange is over (net::Failover::NoteWriteAround).
  void NoteWriteAround(const Operation& op, std::size_t home, std::size_t server) {
    failover_->NoteWriteAround(op, home, server);
  }
  // One operation, checked and routed, sent alone through the engine's lone
  // call (net::RunAlone), its reply read by the thread's batch of that server.
  Status RunOne(Operation& op);
  void Run(std::span<Operation> ops);
  // This thread's batch runner, claimed for this backend.
  net::BatchRunner& Runner() const;
  // The batch in `slot` (made on first use, for `server`), refilled with `ops`, finished.
  TtServerBatch& Fill(std::size_t server, std::unique_ptr<net::ServerBatch>& slot,
                      std::span<Operation* const> ops) const;
  using ServerReplyFn = std::function<Status(std::size_t, const Reply&, std::string_view)>;
  // One request to one server, its single reply handed to `on_reply`.
  Status RoundTrip(std::size_t server, const std::string& request, ReplyShape shape,
                   const std::function<Status(const Reply&, std::string_view)>& on_reply);
  // One request to every server at once.
  Status RoundTripAll(const std::string& request, ReplyShape shape,
                      const ServerReplyFn& on_reply);
  // One request to each of `servers` at once (one runner, one deadline), each
  // server's reply handed to `on_reply(server, ...)`; the first error in the
  // order of `servers`, if any.
  Status RoundTripOn(std::span<const std::size_t> servers, const std::string& request,
                     ReplyShape shape, const ServerReplyFn& on_reply);

  const std::uint64_t id_;  // BatchRunner::NewOwner(): claims this thread's runner
  TokyoTyrantOptions options_;
  net::ServerPool pool_;
  // With failover and more than one server: routes around dead servers and
  // undoes what outages left behind.
  std::unique_ptr<net::Failover> failover_;
};

}  // namespace cachet::tokyotyrant
