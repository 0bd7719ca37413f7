// Cache: the typed facade's non-template half: namespacing, default TTL,
// metrics, batches and the in-flight load claims of GetOrCompute.
// Cache::Open, which builds a Cache from a Config, is in cache_open.cpp.
#include "cachet/cache.h"

#include <array>
#include <utility>

#include "batch_plan.h"
#include "cache_metrics.h"
#include "cache_state.h"
#include "computed_record.h"
#include "prefixed_key.h"

namespace cachet {

namespace {

Status EmptyKeyError() { return Status::InvalidArgument("empty key"); }

std::vector<std::string_view> Views(const std::vector<std::string>& keys) {
  return std::vector<std::string_view>(keys.begin(), keys.end());
}

// Reads `key` under the namespace as the store holds it.
Status ReadStored(Backend& backend, const std::string& key_namespace, std::string_view key,
                  Item* out, CacheOp op) {
  if (key.empty()) return EmptyKeyError();
  const PrefixedKey full_key(key_namespace, key);
  // Gets asks for the CAS token, which some stores (Redis) compute only on request.
  return op == CacheOp::kGets ? backend.Gets(full_key.view(), out)
                              : backend.Get(full_key.view(), out);
}

}  // namespace

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
  Status s = ReadStored(*backend_, options_.key_namespace, key, out, op);
  // A value GetOrCompute stored with its record reads back as the value alone.
  if (s.ok() && out->value.starts_with(kComputedMagic)) s = OpenComputedRecord(out);
  counter.Finish(s);
  return s;
}

Status Cache::GetStoredItem(std::string_view key, Item* out, CacheOp op) {
  const CallCounter counter(metrics_table(), op);
  Status s = ReadStored(*backend_, options_.key_namespace, key, out, op);
  counter.Finish(s);
  return s;
}

Status Cache::CountRefusal(CacheOp op, Status s) {
  CallCounter(metrics_table(), op).Finish(s);
  return s;
}

Status Cache::StoreItem(StoreMode mode, std::string_view key, ItemView item, std::optional<Ttl> ttl,
                        CacheOp op) {
  // Bytes that would read back as GetOrCompute's record are refused, so no
  // value written through a Cache is misread. Append cannot be checked (what
  // it joins is in the store).
  if (mode != StoreMode::kAppend &&
      LooksLikeComputedRecord(item.value, mode == StoreMode::kPrepend)) {
    const CallCounter counter(metrics_table(), op);
    Status s = ComputedRecordRefused();
    counter.Finish(s);
    return s;
  }
  return WriteItem(mode, key, item, ttl, op);
}

Status Cache::WriteItem(StoreMode mode, std::string_view key, ItemView item, std::optional<Ttl> ttl,
                        CacheOp op) {
  const CallCounter counter(metrics_table(), op);
  const WriteOptions write{EffectiveTtl(ttl)};
  Status s;
  if (key.empty()) {
    s = EmptyKeyError();
  } else if (write.ttl.count() < 0) {
    s = NegativeTtlError(backend_->name());  // refused here for every store alike
  } else {
    s = backend_->Store(mode, PrefixedKey(options_.key_namespace, key).view(), item, write);
  }
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
  Status s;
  if (key.empty()) {
    s = EmptyKeyError();
  } else if (ttl.count() < 0) {
    s = NegativeTtlError(backend_->name());
  } else {
    s = backend_->Touch(PrefixedKey(options_.key_namespace, key).view(), ttl);
  }
  counter.Finish(s);
  return s;
}

std::vector<Status> Cache::RemoveMulti(const std::vector<std::string>& keys) {
  const CallCounter counter(metrics_table(), CacheOp::kRemoveMulti);
  const std::vector<std::string_view> views = Views(keys);
  std::vector<Status> statuses(keys.size());
  OutcomeTally tally;
  BatchPlan plan;
  plan.Plan(options_.key_namespace, views, OpKind::kRemove, statuses, &tally);
  backend_->Execute(plan.operations());
  plan.CollectStatuses(statuses, &tally);
  counter.Finish(tally);
  return statuses;
}

std::vector<Status> Cache::GetItems(const std::vector<std::string>& keys,
                                    std::vector<Item>* items) {
  const CallCounter counter(metrics_table(), CacheOp::kGetMulti);
  const std::vector<std::string_view> views = Views(keys);
  std::vector<Status> statuses(keys.size());
  OutcomeTally tally;
  BatchPlan plan;
  plan.Plan(options_.key_namespace, views, OpKind::kGet, statuses, &tally);
  backend_->Execute(plan.operations());
  for (std::size_t j = 0; j < plan.size(); ++j) {
    Operation& op = plan.op(j);
    if (op.status.ok() && op.result.value.starts_with(kComputedMagic)) {
      op.status = OpenComputedRecord(&op.result);
    }
  }
  items->clear();
  items->resize(keys.size());
  for (std::size_t j = 0; j < plan.size(); ++j) {
    if (plan.op(j).status.ok()) (*items)[plan.slot(j)] = std::move(plan.op(j).result);
  }
  plan.CollectStatuses(statuses, &tally);
  counter.Finish(tally);
  return statuses;
}

std::vector<Status> Cache::StoreItems(std::span<const std::string_view> keys,
                                      std::span<const Item> items, std::optional<Ttl> ttl) {
  // Values that would read back as GetOrCompute's record are refused (as
  // StoreItem refuses them) and left out of the batch.
  std::vector<std::size_t> accepted;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!LooksLikeComputedRecord(items[i].value)) accepted.push_back(i);
  }
  if (accepted.size() != keys.size()) {
    std::vector<std::string_view> kept_keys;
    std::vector<Item> kept_items;
    for (const std::size_t i : accepted) {
      kept_keys.push_back(keys[i]);
      kept_items.push_back(items[i]);
    }
    const std::vector<Status> stored = StoreItems(kept_keys, kept_items, ttl);
    std::vector<Status> statuses(keys.size(), ComputedRecordRefused());
    for (std::size_t j = 0; j < accepted.size(); ++j) statuses[accepted[j]] = stored[j];
    return statuses;
  }
  const CallCounter counter(metrics_table(), CacheOp::kSetMulti);
  std::vector<Status> statuses(keys.size());
  OutcomeTally tally;
  BatchPlan plan;
  plan.Plan(options_.key_namespace, keys, OpKind::kStore, statuses, &tally);
  const Ttl effective = EffectiveTtl(ttl);
  if (effective.count() < 0) {
    // Nothing is sent: every key gets the refusal (an empty key keeps its own).
    const Status refused = NegativeTtlError(backend_->name());
    for (std::size_t j = 0; j < plan.size(); ++j) plan.op(j).status = refused;
    plan.CollectStatuses(statuses, &tally);
    counter.Finish(tally);
    return statuses;
  }
  for (std::size_t j = 0; j < plan.size(); ++j) {
    Operation& op = plan.op(j);
    op.mode = StoreMode::kSet;
    op.item = ItemView(items[plan.slot(j)]);
    op.ttl = effective;
  }
  backend_->Execute(plan.operations());
  plan.CollectStatuses(statuses, &tally);
  counter.Finish(tally);
  return statuses;
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

NearMetrics Cache::near_metrics() const { return NearCacheMetrics(*backend_); }

void Cache::ResetMetrics() { state_->metrics.Reset(); }

}  // namespace cachet
