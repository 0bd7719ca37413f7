// MemcachedBackend: checks, routing, per-server batches and fan-out.
#include "memcached_backend.h"

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "admin_command.h"
#include "key_check.h"
#include "meta_batch.h"
#include "text_batch.h"

namespace cachet::memcached {

MemcachedBackend::MemcachedBackend(MemcachedOptions options)
    : id_(net::BatchRunner::NewOwner()),
      options_(std::move(options)),
      call_timeout_(options_.pool.connection.CallTimeout()),
      limits_{2048, options_.max_item_size},
      pool_(options_.servers,
            net::Distribution::Create(options_.distribution, options_.servers,
                                      options_.ketama_points),
            options_.pool) {
  failover_ = net::Failover::IfEnabled(
      pool_,
      [this](std::size_t server, std::span<Operation* const> ops,
             std::unique_ptr<net::ServerBatch>& slot) -> net::ServerBatch* {
        return &FillBatch(server, slot, ops, {options_.binary_keys});
      },
      [this](std::span<const std::size_t> servers, std::vector<bool>* cleaned) {
        // Each server's outcome is in `cleaned`; the first error says nothing more.
        static_cast<void>(RunOnServers(
            "flush_all", servers, [&](std::size_t s, const auto&) { (*cleaned)[s] = true; }));
      });
}

MemcachedBackend::~MemcachedBackend() = default;

std::unique_ptr<MemcachedBatch> MemcachedBackend::NewBatch() const {
  if (options_.protocol == Protocol::kMeta) return std::make_unique<MetaBatch>(limits_);
  return std::make_unique<TextBatch>(limits_);
}

Status MemcachedBackend::TooLargeError(std::size_t size) const {
  return Status::TooLarge("memcached: a value of " + std::to_string(size) +
                          " bytes is over max_item_size (" +
                          std::to_string(options_.max_item_size) + ")");
}

bool MemcachedBackend::Route(Operation& op, std::size_t* server, std::size_t* home) {
  return net::RouteOperation(pool_, failover_.get(), op, server, home);
}

net::BatchRunner& MemcachedBackend::Runner() const {
  // In the plugin, so that the plugin's code outlives the batches it holds.
  thread_local net::BatchRunner runner;
  runner.Claim(id_, pool_.size());
  return runner;
}

MemcachedBatch& MemcachedBackend::FillBatch(std::size_t server,
                                            std::unique_ptr<net::ServerBatch>& slot,
                                            std::span<Operation* const> ops,
                                            const BatchSettings& settings) const {
  // A runner's slot serves one server of this store for as long as it lives.
  if (!slot) {
    std::unique_ptr<MemcachedBatch> batch = NewBatch();
    batch->set_server(pool_.address(server).HostPort());
    slot = std::move(batch);
  }
  auto& batch = static_cast<MemcachedBatch&>(*slot);
  batch.Reset(settings);
  for (Operation* op : ops) batch.Add(*op);
  batch.Finish();
  return batch;
}

void MemcachedBackend::Run(std::span<Operation> ops, const BatchSettings& settings) {
  // A set refused for its size drops the key's value in its place, as the
  // server's own refusal does: it goes out as a delete, so what follows it on
  // the key finds no value, and it answers too_large whatever the delete's reply.
  std::vector<Operation*> refused_sets;
  for (Operation& op : ops) {
    if (op.kind == OpKind::kStore && op.mode == StoreMode::kSet &&
        op.item.value.size() > options_.max_item_size &&
        KeyIsValid(op.key, options_.binary_keys)) [[unlikely]] {
      op.kind = OpKind::kRemove;
      refused_sets.push_back(&op);
    }
  }
  RunChecked(ops, settings);
  for (Operation* op : refused_sets) {
    op->kind = OpKind::kStore;
    op->status = TooLargeError(op->item.value.size());
  }
}

void MemcachedBackend::RunChecked(std::span<Operation> ops, const BatchSettings& settings) {
  net::BatchRunner& runner = Runner();
  const net::BatchRunner::Filling filling(runner);
  // With failover: operations that went around their home server, noted after.
  std::vector<net::Failover::Around> around;
  // Whether the one server is live is asked once for the whole batch, which
  // goes out as one exchange anyway.
  if (LoneLiveServer()) {
    for (Operation& op : ops) {
      op.status = Check(op);
      if (op.status.ok()) runner.Add(0, op);
    }
  } else {
    net::AddRoutedOperations(runner, pool_, failover_.get(), ops,
                             [this](const Operation& op) { return Check(op); }, &around);
  }
  runner.EnlistGroups(pool_, [&](std::size_t server, std::span<Operation* const> group,
                                 std::unique_ptr<net::ServerBatch>& slot) {
    return &FillBatch(server, slot, group, settings);
  });
  runner.Run(pool_.CallDeadline());
  if (!around.empty()) [[unlikely]]
    failover_->NoteWritesAround(around);
}

void MemcachedBackend::RunBatchOfOne(Operation& op, std::size_t server,
                                     const BatchSettings& settings, Item* hit,
                                     net::Deadline deadline) {
  // One operation needs no grouping by server: straight to its exchange.
  net::BatchRunner& runner = Runner();
  Operation* const one[] = {&op};
  MemcachedBatch& batch = FillBatch(server, runner.slot(server), one, settings);
  // A hit goes to the caller's Item, whose buffer is reused.
  batch.LendItem(op, hit);
  runner.Enlist(pool_, server, batch);
  runner.Run(deadline);
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
  const std::string request = std::string(command) + "\r\n";
  std::vector<AdminReplyReader> readers;
  readers.reserve(servers.size());  // the batches below hold their addresses
  std::vector<net::ServerBatch*> batches;
  std::vector<net::ServerRef> targets;
  for (std::size_t server : servers) {
    readers.emplace_back(command, request, limits_);
    batches.push_back(&readers.back());
    targets.push_back({&pool_, server});
  }
  // Its own runner (RunOnEach): a repair runs this in the middle of routing a batch.
  const std::vector<Status> outcomes = net::RunOnEach(targets, batches, pool_.CallDeadline());
  Status first_error;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const Status s =
        outcomes[i].ok() ? NamingServer(readers[i].outcome(), pool_.address(servers[i]).HostPort())
                         : outcomes[i];
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
