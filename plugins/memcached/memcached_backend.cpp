// MemcachedBackend: checks, routing, per-server batches and fan-out.
#include "memcached_backend.h"

#include <atomic>
#include <functional>

#include "admin_command.h"
#include "key_check.h"
#include "meta_batch.h"
#include "text_batch.h"

namespace cachet::memcached {

namespace {

std::atomic<std::uint64_t> g_next_backend_id{1};

}  // namespace

// Per-thread working memory of Run(), reused so a steady stream of operations
// allocates nothing: per-server operation lists, batches, exchanges, leases.
struct MemcachedBackend::Scratch {
  std::uint64_t owner = 0;  // MemcachedBackend::id_ of the last user
  std::vector<std::vector<Operation*>> by_server;
  std::vector<std::unique_ptr<ServerBatch>> batches;
  std::vector<net::Exchange> exchanges;  // only the first `used` are this batch's
  std::size_t used = 0;
  std::vector<net::ServerPool::Lease> leases;
  std::vector<std::size_t> servers;  // the server of each exchange
  net::Deadline deadline{};          // the batch's end, set by its first exchange
  // With failover: this batch's operations that went around their home server.
  struct Around {
    const Operation* op;
    std::size_t home;
    std::size_t server;
  };
  std::vector<Around> around;

  static Scratch& For(const MemcachedBackend& backend) {
    thread_local Scratch scratch;
    if (scratch.owner != backend.id_) {
      // Another backend used this thread last: its batches may speak another
      // protocol, with other limits and another number of servers. Ids, not
      // addresses: a new backend may live where a destroyed one did.
      scratch.owner = backend.id_;
      scratch.by_server.assign(backend.pool_.size(), {});
      scratch.batches.clear();
      scratch.batches.resize(backend.pool_.size());
    }
    return scratch;
  }
};

MemcachedBackend::MemcachedBackend(MemcachedOptions options)
    : id_(g_next_backend_id.fetch_add(1)),
      options_(std::move(options)),
      limits_{2048, options_.max_item_size},
      pool_(options_.servers,
            net::Distribution::Create(options_.distribution, options_.servers,
                                      options_.ketama_points),
            options_.pool) {
  if (options_.pool.failover && pool_.size() > 1) {
    ledger_ = std::make_unique<FailoverLedger>(pool_.size(), options_.failover_max_keys);
  }
}

MemcachedBackend::~MemcachedBackend() = default;

std::unique_ptr<ServerBatch> MemcachedBackend::NewBatch() const {
  if (options_.protocol == Protocol::kMeta) return std::make_unique<MetaBatch>(limits_);
  return std::make_unique<TextBatch>(limits_);
}

Status MemcachedBackend::TooLargeError(std::size_t size) const {
  return Status::TooLarge("memcached: a value of " + std::to_string(size) +
                          " bytes is over max_item_size (" +
                          std::to_string(options_.max_item_size) + ")");
}

bool MemcachedBackend::Route(Operation& op, std::size_t* server, std::size_t* home) {
  Result<std::size_t> routed = pool_.Route(op.key, home);
  if (!routed.ok()) {
    op.status = routed.status();
    return false;
  }
  *server = *routed;
  // Without failover, or with every server up and nothing owed, that is all.
  if (ledger_ != nullptr && (*server != *home || ledger_->AnyOwed())) {
    return RouteAfterOutage(op, *home, server);
  }
  return true;
}

void MemcachedBackend::AddExchange(Scratch& s, std::size_t server, std::span<Operation* const> ops,
                                   const BatchSettings& settings) {
  if (!s.batches[server]) s.batches[server] = NewBatch();
  ServerBatch& batch = *s.batches[server];
  batch.Reset(settings);
  for (Operation* op : ops) batch.Add(*op);
  batch.Finish();
  // One deadline for the whole batch: waits for a connection count against it.
  if (s.used == 0) s.deadline = pool_.CallDeadline();
  // A batch done before any reply (text noreply writes only) reads nothing.
  s.leases.push_back(pool_.Acquire(
      server, batch.done() ? net::ServerPool::Use::kWritesOnly : net::ServerPool::Use::kReadsReplies,
      s.deadline));
  s.servers.push_back(server);
  // Exchanges are kept, not cleared, so their iovec vectors keep their capacity.
  if (s.used == s.exchanges.size()) s.exchanges.emplace_back();
  net::Exchange& e = s.exchanges[s.used++];
  e.connection = &s.leases.back().connection();
  batch.request().Iovecs(&e.request);
  e.reader = &batch;
}

void MemcachedBackend::RunExchanges(Scratch& s) {
  if (s.used == 0) return;
  std::span<net::Exchange> exchanges(s.exchanges.data(), s.used);
  net::RunExchanges(exchanges, s.deadline);
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    ServerBatch& batch = *s.batches[s.servers[i]];
    batch.Settle(s.exchanges[i].status);
    pool_.Report(s.servers[i], *s.exchanges[i].connection, s.exchanges[i].status);
    if (batch.poisoned()) s.exchanges[i].connection->Close();
  }
  s.used = 0;
  s.servers.clear();
  s.leases.clear();  // connections go back to the pool
}

void MemcachedBackend::Run(std::span<Operation> ops, const BatchSettings& settings) {
  Scratch& s = Scratch::For(*this);
  // Whether the one server is live is asked once for the whole batch, which
  // goes out as one exchange anyway.
  if (LoneLiveServer()) {
    std::vector<Operation*>& all = s.by_server[0];
    for (Operation& op : ops) {
      op.status = Check(op);
      if (op.status.ok()) all.push_back(&op);
    }
  } else {
    for (Operation& op : ops) {
      std::size_t server = 0;
      std::size_t home = 0;
      op.status = Check(op);
      if (!op.status.ok() || !Route(op, &server, &home)) continue;
      s.by_server[server].push_back(&op);
      if (server != home) [[unlikely]]
        s.around.push_back({&op, home, server});
    }
  }
  for (std::size_t server = 0; server < s.by_server.size(); ++server) {
    std::vector<Operation*>& mine = s.by_server[server];
    if (mine.empty()) continue;
    AddExchange(s, server, mine, settings);
    mine.clear();
  }
  RunExchanges(s);
  if (!s.around.empty()) [[unlikely]] {
    for (const Scratch::Around& a : s.around) NoteWriteAround(*a.op, a.home, a.server);
    s.around.clear();
  }
}

Status MemcachedBackend::RunBatchOfOne(Operation& op, std::size_t server,
                                       const BatchSettings& settings, Item* hit) {
  // One operation needs no grouping by server: straight to its exchange.
  Scratch& s = Scratch::For(*this);
  Operation* const one[] = {&op};
  // The batch fills op.result; the caller's Item lends its buffer there.
  if (hit != &op.result) std::swap(op.result, *hit);
  AddExchange(s, server, one, settings);
  RunExchanges(s);
  if (hit != &op.result) std::swap(op.result, *hit);
  return std::move(op.status);
}

Status MemcachedBackend::Get(std::string_view key, Item* out) {
  Operation op;
  op.kind = OpKind::kGet;
  op.key = key;
  // The caller's Item takes the hit, so repeated reads reuse one allocation.
  return RunOne(op, {options_.binary_keys}, out);
}

Status MemcachedBackend::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  if (ttl.count() < 0) return NegativeTtlError("memcached");
  Operation op;
  op.kind = OpKind::kGet;
  op.key = key;
  return RunOne(op, {options_.binary_keys, true, ttl}, out);
}

Status MemcachedBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                               const WriteOptions& options) {
  Operation op;
  op.kind = OpKind::kStore;
  op.mode = mode;
  op.key = key;
  op.item = item;
  op.ttl = options.ttl;
  op.noreply = options.noreply;
  return RunOne(op, {options_.binary_keys}, &op.result);
}

Status MemcachedBackend::Remove(std::string_view key) {
  Operation op;
  op.kind = OpKind::kRemove;
  op.key = key;
  return RunOne(op, {options_.binary_keys}, &op.result);
}

Status MemcachedBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  Operation op;
  op.kind = OpKind::kIncr;
  op.key = key;
  op.delta = delta;
  Status s = RunOne(op, {options_.binary_keys}, &op.result);
  if (s.ok() && value != nullptr) *value = op.counter;
  return s;
}

Status MemcachedBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  Operation op;
  op.kind = OpKind::kDecr;
  op.key = key;
  op.delta = delta;
  Status s = RunOne(op, {options_.binary_keys}, &op.result);
  if (s.ok() && value != nullptr) *value = op.counter;
  return s;
}

Status MemcachedBackend::Touch(std::string_view key, Ttl ttl) {
  Operation op;
  op.kind = OpKind::kTouch;
  op.key = key;
  op.ttl = ttl;
  return RunOne(op, {options_.binary_keys}, &op.result);
}

void MemcachedBackend::Execute(std::span<Operation> batch) {
  // A batch of one (a lone noreply write, say) takes the single-operation path,
  // which keeps the batch path's rules with less bookkeeping (memcached_single.cpp).
  if (batch.size() == 1) {
    Operation& op = batch.front();
    op.status = RunOne(op, {options_.binary_keys}, &op.result);
    return;
  }
  Run(batch, {options_.binary_keys});
}

Status MemcachedBackend::RunOnEveryServer(
    std::string_view command,
    const std::function<void(std::size_t, const std::vector<std::pair<std::string, std::string>>&)>&
        on_reply) {
  std::vector<std::size_t> all(pool_.size());
  for (std::size_t server = 0; server < all.size(); ++server) all[server] = server;
  return RunOnServers(command, all, on_reply);
}

Status MemcachedBackend::RunOnServers(
    std::string_view command, std::span<const std::size_t> servers,
    const std::function<void(std::size_t, const std::vector<std::pair<std::string, std::string>>&)>&
        on_reply) {
  std::string request = std::string(command) + "\r\n";
  std::vector<net::ServerPool::Lease> leases;
  std::vector<AdminReplyReader> readers;
  std::vector<net::Exchange> exchanges(servers.size());
  leases.reserve(servers.size());
  readers.reserve(servers.size());
  const net::Deadline deadline = pool_.CallDeadline();
  for (std::size_t i = 0; i < servers.size(); ++i) {
    leases.push_back(pool_.Acquire(servers[i], net::ServerPool::Use::kReadsReplies, deadline));
    readers.emplace_back(command, limits_);
    exchanges[i].connection = &leases.back().connection();
    exchanges[i].request.push_back({request.data(), request.size()});
    exchanges[i].reader = &readers.back();
  }
  net::RunExchanges(exchanges, deadline);
  Status first_error;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    Status s = exchanges[i].status;
    pool_.Report(servers[i], leases[i].connection(), s);
    if (s.ok()) s = readers[i].outcome();
    if (s.ok()) {
      on_reply(servers[i], readers[i].lines());
    } else if (first_error.ok()) {
      first_error = s;
    }
  }
  return first_error;
}

Status MemcachedBackend::Flush() {
  return RunOnEveryServer("flush_all", [](std::size_t, const auto&) {});
}

Status MemcachedBackend::Stats(StatsMap* out) {
  out->clear();
  return RunOnEveryServer("stats", [&](std::size_t server, const auto& lines) {
    const std::string prefix = pool_.address(server).HostPort() + " ";
    for (const auto& [name, value] : lines) out->emplace_back(prefix + name, value);
  });
}

Status MemcachedBackend::Extension(std::string_view command, std::span<const std::string> args,
                                   std::vector<std::string>* reply) {
  if (command != "version" || !args.empty()) {
    return Backend::Extension(command, args, reply);
  }
  reply->clear();
  return RunOnEveryServer("version", [&](std::size_t server, const auto& lines) {
    reply->push_back(pool_.address(server).HostPort() + " " + lines.front().second);
  });
}

}  // namespace cachet::memcached
