// BatchRunner: runs a network store's batch, one exchange per server, all at once.
//
// What every network store does with a batch is the same: put each operation
// in its server's group, turn each group into one request (the store's
// protocol), lease a connection per server, send every request and read every
// reply at once (RunExchanges), tell the pool how each server did (its one
// health rule, ServerPool::Report) and give each operation its outcome. The
// runner does all of it; a store supplies one ServerBatch per server: its
// request bytes and the reader of its replies (no I/O of its own).
//
//   runner.Claim(owner, pool.size());           // this thread's runner, for this store
//   for (Operation& op : ops) runner.AddRouted(pool, op);  // or Add(server, op)
//   runner.EnlistGroups(pool, [&](std::size_t server, std::span<Operation* const> group,
//                                 std::unique_ptr<ServerBatch>& slot) {
//     ... fill the store's batch in `slot` from `group` ...; return slot.get();
//   });
//   runner.Run(pool.CallDeadline());
//
// A runner keeps its groups, batches, exchanges and leases from one batch to
// the next, so a steady stream of batches allocates nothing: a store keeps one
// per thread (a thread_local in the plugin, so the plugin's code outlives the
// batches it made) and Claim()s it with its owner id on each use.
//
// Not thread-safe: one runner per thread. Not re-entrant: a store that must run
// another batch while building one (a repair in the middle of routing) uses a
// runner of its own for it (debug builds assert it).
//
// Exception safe: when a fill, a setup or a reader throws out of EnlistGroups
// or Run, the runner closes every connection it leased and drops its groups,
// exchanges and batches, so the thread's next batch starts clean.
#pragma once

#include <sys/uio.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/export.h"
#include "cachet/net/fan_out.h"
#include "cachet/net/server_pool.h"
#include "cachet/status.h"

namespace cachet::net {

// One server's share of a batch, as a store encodes it: the request, and the
// reader its replies are fed to (ReplyReader::Consume, done).
class CACHET_EXPORT ServerBatch : public ReplyReader {
 public:
  ~ServerBatch() override;
  // Sets `*out` to the request's bytes, in order; they stay put until Settle().
  virtual void Request(std::vector<iovec>* out) const = 0;
  // After the exchange: every operation still unanswered takes `transport`
  // (ok when the exchange went through, else why it failed). After any failure
  // (a protocol error, bytes after the last reply included, or an early end) a
  // batch whose replies pair with its requests by position keeps no answer:
  // after a reply skipped or one too many, any may be another key's.
  virtual void Settle(const Status& transport) = 0;
  // True after a reply that leaves the stream out of step: the connection is
  // closed rather than pooled again.
  virtual bool poisoned() const noexcept { return false; }
  // True when every operation only reads, so the batch runs as well twice: sent
  // on a pooled connection the server had closed before answering, it goes
  // once more on a new one (net::ClosedUnanswered). False by default.
  virtual bool reads_only() const noexcept { return false; }
};

// What an operation a failed exchange left unanswered answers: `transport`,
// except after a reply too large to read (the exchange ends there), when it
// answers io_error, not answered, naming that reply: too_large would say its
// own value was over the limit, or, for a write, that it was refused for its
// size (and a refused set's key is removed), where the server may have applied
// it. The operation whose reply it was answers too_large (its batch knows it).
CACHET_EXPORT Status UnansweredStatus(const Operation& op, const Status& transport,
                                      std::string_view store);

class CACHET_EXPORT BatchRunner {
 public:
  BatchRunner() = default;
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // A number no other store of this process has, for Claim().
  static std::uint64_t NewOwner();

  // Makes this runner the one of store `owner` with `servers` servers. When
  // another store used it last, its groups and batches are dropped: they may
  // speak another protocol. Owner ids, not addresses: a new store may live
  // where a destroyed one did.
  void Claim(std::uint64_t owner, std::size_t servers) {
    assert(!busy_ && "BatchRunner is not re-entrant");
    if (owner != owner_) Reset(owner, servers);
  }

  // Held by a store while it fills the runner (routing, Add, EnlistGroups, Run):
  // should its code throw (out of memory while routing), everything added is
  // dropped, never sent with the thread's next batch.
  class Filling {
   public:
    explicit Filling(BatchRunner& runner) : runner_(runner) {}
    ~Filling() {
      if (std::uncaught_exceptions() > exceptions_) runner_.Abandon();
    }
    Filling(const Filling&) = delete;
    Filling& operator=(const Filling&) = delete;

   private:
    BatchRunner& runner_;
    int exceptions_ = std::uncaught_exceptions();
  };

  // Puts `op` in `server`'s group. REQUIRES: server < the count Claim() got.
  void Add(std::size_t server, Operation& op) {
    assert(!busy_ && "BatchRunner is not re-entrant");
    groups_[server].push_back(&op);
  }
  // Puts `op` in the group of the server `pool` routes its key to
  // (ServerPool::Route), or gives it the route's error (every server resting).
  // REQUIRES: Claim() got `pool`'s size.
  void AddRouted(const ServerPool& pool, Operation& op) {
    Result<std::size_t> server = pool.Route(op.key);
    if (server.ok()) {
      Add(*server, op);
    } else {
      op.status = server.status();
    }
  }

  // Turns each group into its server's batch, in server order, and enlists
  // it: `fill(server, group, slot)` builds the batch (in `slot`, kept across
  // calls; the store makes it there on first use) and returns it, or null when
  // nothing needs sending (every operation already settled). Empties the groups.
  template <class Fill>
  void EnlistGroups(ServerPool& pool, Fill&& fill) {
    assert(!busy_ && "BatchRunner is not re-entrant");
    const Busy busy(*this);
    for (std::size_t server = 0; server < groups_.size(); ++server) {
      std::vector<Operation*>& group = groups_[server];
      if (group.empty()) continue;
      ServerBatch* batch = fill(server, std::span<Operation* const>(group), batches_[server]);
      if (batch != nullptr) EnlistOne(pool, server, *batch);
      group.clear();
    }
  }

  // The batch kept for `server` (EnlistGroups' `slot`), for a store that
  // builds one server's batch without grouping (a single operation).
  std::unique_ptr<ServerBatch>& slot(std::size_t server) { return batches_[server]; }

  // Adds one exchange to the next Run(): `batch` sent to `server` of `pool`.
  // The batch must stay alive until Run() returns.
  void Enlist(ServerPool& pool, std::size_t server, ServerBatch& batch);

  // Runs every enlisted exchange at once, all by `deadline` (waits for a
  // pooled connection included): leases a connection per exchange, sends and
  // reads (RunExchanges; a connection connected anew runs `setup`'s login
  // first, in the same loop), reports each outcome to its pool, settles each
  // batch, then returns the connections. When the wait for pooled
  // connections used the time up, no exchange is begun: their operations
  // time out and no server's health is touched, since none was asked. True
  // when every exchange went through (whatever the replies said).
  bool Run(Deadline deadline, const ConnectionSetup* setup = nullptr);

  // The outcome of the i-th exchange enlisted for the last Run() (in enlist
  // order: EnlistGroups enlists in server order, skipping empty groups and null
  // fills), until the next Enlist (or EnlistGroups) begins a new batch.
  const Status& status(std::size_t i) const {
    assert(phase_ == Phase::kRan && "status() is the last Run()'s");
    return enlisted_[i].status;
  }
  // Whether the i-th exchange's request began to go out. False when it failed
  // before (its connect, handshake or login, or the wait for a connection):
  // the server cannot have run it, so the store may send it again
  // (net/retry.h).
  bool sent(std::size_t i) const {
    assert(phase_ == Phase::kRan && "sent() is the last Run()'s");
    return enlisted_[i].sent;
  }

 private:
  // One exchange enlisted for the next Run(): where it goes and what it sends.
  struct Enlisted {
    ServerPool* pool;
    std::size_t server;
    ServerBatch* batch;
    Status status;      // its outcome, once Run() is over
    bool sent = false;  // its request began to go out
    bool squeezed = false;  // its wait for a connection left it less than io_timeout
    bool pooled = false;    // its connection was up when leased (reused)
    std::uint64_t heard = 0;  // its connection's bytes received before the exchange
  };

  // Marks the runner busy while a store's code runs inside it (fills, setups,
  // readers); if that code throws, Abandon()s everything the call held.
  class Busy {
   public:
    explicit Busy(BatchRunner& runner) : runner_(runner), filling_(runner) {
      runner_.busy_ = true;
    }
    ~Busy() { runner_.busy_ = false; }  // then filling_ abandons, after an exception
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    BatchRunner& runner_;
    const Filling filling_;
  };

  // What enlisted_ holds: the exchanges the next Run() sends, or the last
  // Run()'s outcomes (kept for status() until a new batch is enlisted).
  enum class Phase : std::uint8_t { kEnlisting, kRan };

  void Reset(std::uint64_t owner, std::size_t servers);
  // Readies enlisted_ for a new batch: the last Run()'s outcomes are dropped.
  void BeginEnlisting() noexcept;
  // After an exception: closes every leased connection (its stream may hold
  // replies nobody read) and drops leases, exchanges, groups and batches.
  void Abandon() noexcept;
  // Enlist() without the re-entrance check, for EnlistGroups.
  void EnlistOne(ServerPool& pool, std::size_t server, ServerBatch& batch);
  // Settles, without a health report, every exchange when the deadline passed
  // before any could start (waiting for pooled connections used it up).
  bool SettleLate();
  // Sends once more, on new connections, the reads of the first `used`
  // exchanges that pooled connections took but their servers had closed before
  // answering (ServerBatch::reads_only).
  void ResendUnanswered(std::size_t used, Deadline deadline);
  // Settles one exchange's batch with its status and reports it to its pool.
  void Finish(Enlisted& e, Connection& connection);

  std::uint64_t owner_ = 0;                            // the store the groups and batches are for
  std::vector<std::vector<Operation*>> groups_;        // per server
  std::vector<std::unique_ptr<ServerBatch>> batches_;  // per server, kept across calls
  std::vector<Enlisted> enlisted_;                     // this call's exchanges
  Phase phase_ = Phase::kEnlisting;                    // what enlisted_ holds
  bool busy_ = false;                                  // inside EnlistGroups or Run
  std::vector<ServerPool::Lease> leases_;              // one per enlisted exchange, in order
  std::vector<Exchange> exchanges_;  // kept, not cleared: their iovec lists keep their room
  std::vector<std::size_t> resent_;  // ResendUnanswered: the exchanges sent again
  std::vector<Exchange> again_;      // and their second exchanges
};

// A server of a pool, for RunOnEach.
struct ServerRef {
  ServerPool* pool;
  std::size_t server;
};

// One batch to each of several servers at once, outside any store's batch (an
// admin command to every server: flush, stats, version): `batches[i]` goes to
// `servers[i]` by `deadline`, on a runner of its own (it may come while the
// thread's runner holds a batch); a connection connected anew logs in with
// `setup` first. A resting server (ServerPool::Available() false) is not
// asked. Returns each server's outcome, in order: its DeadServerError, or how
// its exchange went (what the replies said is the batch's to tell). The
// runner settles the batches in the order given, so a batch that reads its
// reply in Settle() sees them in that order.
CACHET_EXPORT std::vector<Status> RunOnEach(std::span<const ServerRef> servers,
                                            std::span<ServerBatch* const> batches,
                                            Deadline deadline,
                                            const ConnectionSetup* setup = nullptr);

}  // namespace cachet::net
