// Cache: the typed facade's non-template half: namespacing, default TTL,
// metrics, batches and the in-flight load claims of GetOrCompute.
// Cache::Open, which builds a Cache from a Config, is in cache_open.cpp.
#include "cachet/cache.h"

#include <array>
#include <utility>

#include "cache_metrics.h"
#include "load_coordinator.h"
#include "prefixed_key.h"

namespace cachet {

namespace {

// How long a thread waits for another thread's loader before loading itself.
// Generous on purpose: a slow loader should be waited for, a hung one must not
// block its waiters for good.
constexpr std::chrono::seconds kLoadWaitLimit{10};

Status EmptyKeyError() { return Status::InvalidArgument("empty key"); }

// The full keys of a batch, joined into one buffer so a batch allocates once.
// A view into `storage` stays valid because the buffer is sized up front.
std::vector<std::string_view> FullKeys(std::string_view prefix,
                                       std::span<const std::string_view> keys,
                                       std::string* storage) {
  std::vector<std::string_view> full(keys.begin(), keys.end());
  if (prefix.empty()) return full;
  std::size_t total = 0;
  for (std::string_view key : keys) total += prefix.size() + key.size();
  storage->reserve(total);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t begin = storage->size();
    storage->append(prefix).append(keys[i]);
    full[i] = std::string_view(storage->data() + begin, prefix.size() + keys[i].size());
  }
  return full;
}

// One Operation of `kind` per non-empty key. Empty keys get kInvalidArgument in
// `statuses` and no operation; `slots[j]` is the key position of batch[j].
struct BatchPlan {
  std::string key_storage;
  std::vector<Operation> batch;
  std::vector<std::size_t> slots;
  std::vector<Status> statuses;
};

void PlanBatch(std::string_view prefix, std::span<const std::string_view> keys, OpKind kind,
               BatchPlan* plan) {
  const std::vector<std::string_view> full = FullKeys(prefix, keys, &plan->key_storage);
  plan->statuses.resize(keys.size());
  plan->batch.reserve(keys.size());
  plan->slots.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty()) {
      plan->statuses[i] = EmptyKeyError();
      continue;
    }
    Operation op;
    op.kind = kind;
    op.key = full[i];
    plan->batch.push_back(std::move(op));
    plan->slots.push_back(i);
  }
}

// Moves each operation's status to its key's position and counts the outcomes.
OutcomeTally CollectStatuses(BatchPlan* plan) {
  for (std::size_t j = 0; j < plan->batch.size(); ++j) {
    plan->statuses[plan->slots[j]] = std::move(plan->batch[j].status);
  }
  OutcomeTally tally;
  for (const Status& s : plan->statuses) tally.Count(s);
  return tally;
}

std::vector<std::string_view> Views(const std::vector<std::string>& keys) {
  return std::vector<std::string_view>(keys.begin(), keys.end());
}

}  // namespace

struct Cache::State {
  MetricsTable metrics;
  LoadCoordinator loads{kLoadWaitLimit};
};

std::string_view CacheOpName(CacheOp op) noexcept {
  // In CacheOp order.
  static constexpr std::array<std::string_view, static_cast<std::size_t>(CacheOp::kCount)> kNames =
      {"get",       "gets",      "set",          "add",   "replace", "append",
       "prepend",   "cas",       "remove",       "incr",  "decr",    "touch",
       "get_multi", "set_multi", "remove_multi", "flush", "stats"};
  const auto index = static_cast<std::size_t>(op);
  return index < kNames.size() ? kNames[index] : "unknown";
}

Cache::Cache(std::shared_ptr<Backend> backend, std::shared_ptr<const Codec> codec,
             CacheOptions options)
    : backend_(std::move(backend)),
      codec_(std::move(codec)),
      options_(std::move(options)),
      state_(std::make_unique<State>()) {}

Cache::~Cache() = default;

Status Cache::GetItem(std::string_view key, Item* out, CacheOp op) {
  const CallCounter counter(metrics_table(), op);
  Status s;
  if (key.empty()) {
    s = EmptyKeyError();
  } else {
    const PrefixedKey full_key(options_.key_namespace, key);
    // Gets asks for the CAS token, which some stores (Redis) compute only on request.
    s = op == CacheOp::kGets ? backend_->Gets(full_key.view(), out)
                             : backend_->Get(full_key.view(), out);
  }
  counter.Finish(s);
  return s;
}

Status Cache::StoreItem(StoreMode mode, std::string_view key, ItemView item, std::optional<Ttl> ttl,
                        CacheOp op) {
  const CallCounter counter(metrics_table(), op);
  const WriteOptions write{EffectiveTtl(ttl)};
  Status s = key.empty() ? EmptyKeyError()
                         : backend_->Store(mode, PrefixedKey(options_.key_namespace, key).view(),
                                           item, write);
  counter.Finish(s);
  return s;
}

// Append and prepend keep the item's expiry, as memcached does, so they pass a
// zero TTL rather than the default one.
Status Cache::Append(std::string_view key, std::string_view bytes) {
  return StoreItem(StoreMode::kAppend, key, ItemView(bytes), Ttl{0}, CacheOp::kAppend);
}

Status Cache::Prepend(std::string_view key, std::string_view bytes) {
  return StoreItem(StoreMode::kPrepend, key, ItemView(bytes), Ttl{0}, CacheOp::kPrepend);
}

Status Cache::Remove(std::string_view key) {
  const CallCounter counter(metrics_table(), CacheOp::kRemove);
  Status s = key.empty() ? EmptyKeyError()
                         : backend_->Remove(PrefixedKey(options_.key_namespace, key).view());
  counter.Finish(s);
  return s;
}

Result<std::uint64_t> Cache::Incr(std::string_view key, std::uint64_t delta) {
  const CallCounter counter(metrics_table(), CacheOp::kIncr);
  std::uint64_t value = 0;
  Status s = key.empty()
                 ? EmptyKeyError()
                 : backend_->Incr(PrefixedKey(options_.key_namespace, key).view(), delta, &value);
  counter.Finish(s);
  if (!s.ok()) return s;
  return value;
}

Result<std::uint64_t> Cache::Decr(std::string_view key, std::uint64_t delta) {
  const CallCounter counter(metrics_table(), CacheOp::kDecr);
  std::uint64_t value = 0;
  Status s = key.empty()
                 ? EmptyKeyError()
                 : backend_->Decr(PrefixedKey(options_.key_namespace, key).view(), delta, &value);
  counter.Finish(s);
  if (!s.ok()) return s;
  return value;
}

Status Cache::Touch(std::string_view key, Ttl ttl) {
  const CallCounter counter(metrics_table(), CacheOp::kTouch);
  Status s = key.empty() ? EmptyKeyError()
                         : backend_->Touch(PrefixedKey(options_.key_namespace, key).view(), ttl);
  counter.Finish(s);
  return s;
}

std::vector<Status> Cache::RemoveMulti(const std::vector<std::string>& keys) {
  const CallCounter counter(metrics_table(), CacheOp::kRemoveMulti);
  const std::vector<std::string_view> views = Views(keys);
  BatchPlan plan;
  PlanBatch(options_.key_namespace, views, OpKind::kRemove, &plan);
  backend_->Execute(plan.batch);
  const OutcomeTally tally = CollectStatuses(&plan);
  counter.Finish(tally);
  return std::move(plan.statuses);
}

std::vector<Status> Cache::GetItems(const std::vector<std::string>& keys,
                                    std::vector<Item>* items) {
  const CallCounter counter(metrics_table(), CacheOp::kGetMulti);
  const std::vector<std::string_view> views = Views(keys);
  BatchPlan plan;
  PlanBatch(options_.key_namespace, views, OpKind::kGet, &plan);
  backend_->Execute(plan.batch);
  items->clear();
  items->resize(keys.size());
  for (std::size_t j = 0; j < plan.batch.size(); ++j) {
    if (plan.batch[j].status.ok()) (*items)[plan.slots[j]] = std::move(plan.batch[j].result);
  }
  const OutcomeTally tally = CollectStatuses(&plan);
  counter.Finish(tally);
  return std::move(plan.statuses);
}

std::vector<Status> Cache::StoreItems(std::span<const std::string_view> keys,
                                      std::span<const Item> items, std::optional<Ttl> ttl) {
  const CallCounter counter(metrics_table(), CacheOp::kSetMulti);
  BatchPlan plan;
  PlanBatch(options_.key_namespace, keys, OpKind::kStore, &plan);
  const Ttl effective = EffectiveTtl(ttl);
  for (std::size_t j = 0; j < plan.batch.size(); ++j) {
    Operation& op = plan.batch[j];
    op.mode = StoreMode::kSet;
    op.item = ItemView(items[plan.slots[j]]);
    op.ttl = effective;
  }
  backend_->Execute(plan.batch);
  const OutcomeTally tally = CollectStatuses(&plan);
  counter.Finish(tally);
  return std::move(plan.statuses);
}

Status Cache::Flush() {
  const CallCounter counter(metrics_table(), CacheOp::kFlush);
  Status s = backend_->Flush();
  counter.Finish(s);
  return s;
}

Result<StatsMap> Cache::Stats() {
  const CallCounter counter(metrics_table(), CacheOp::kStats);
  StatsMap stats;
  Status s = backend_->Stats(&stats);
  counter.Finish(s);
  if (!s.ok()) return s;
  return stats;
}

MetricsTable* Cache::metrics_table() noexcept {
  return options_.metrics ? &state_->metrics : nullptr;
}

Metrics Cache::metrics() const { return state_->metrics.Snapshot(); }

void Cache::ResetMetrics() { state_->metrics.Reset(); }

bool Cache::BeginLoad(const std::string& key) { return state_->loads.Begin(key); }

void Cache::FinishLoad(const std::string& key) { state_->loads.Finish(key); }


}  // namespace cachet
