// Cache: the typed facade's non-template half: namespacing, default TTL,
// metrics, batches and the in-flight load claims of GetOrCompute.
// Cache::Open, which builds a Cache from a Config, is in cache_open.cpp.
#include "cachet/cache.h"

#include <array>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "batch_plan.h"
#include "cache_metrics.h"
#include "cache_state.h"
#include "computed_record.h"
#include "near_cache.h"
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
  return WithPrefix(key_namespace, key, [&](std::string_view full_key) {
    // Gets asks for the CAS token, which some stores (Redis) compute only on request.
    return op == CacheOp::kGets ? backend.Gets(full_key, out) : backend.Get(full_key, out);
  });
}

// Whether `key`'s bytes and `text`'s storage (its capacity, the terminator
// included) share an address.
bool Overlaps(std::string_view key, const std::string& text) {
  const std::less<const char*> before;
  return !key.empty() && before(key.data(), text.data() + text.capacity() + 1) &&
         before(text.data(), key.data() + key.size());
}

}  // namespace

std::string_view CacheOpName(CacheOp op) noexcept {
  // In CacheOp order.
  static constexpr std::array<std::string_view, static_cast<std::size_t>(CacheOp::kCount)> kNames =
      {"get",       "gets",      "set",          "add",   "replace", "append",
       "prepend",   "cas",       "remove",       "incr",  "decr",    "touch",
       "get_multi", "set_multi", "remove_multi", "flush", "stats",   "get_or_compute",
       "load"};
  const auto index = static_cast<std::size_t>(op);
  return index < kNames.size() ? kNames[index] : "unknown";
}

Cache::Cache(std::shared_ptr<Backend> backend, std::shared_ptr<const Codec> codec,
             CacheOptions options)
    : backend_(std::move(backend)),
      codec_(std::move(codec)),
      options_(std::move(options)),
      state_(std::make_unique<State>()) {
  state_->metrics.set_counting(options_.metrics);
  state_->metrics.set_store(backend_->name());
  if (options_.metrics) active_table_.store(&state_->metrics, std::memory_order_relaxed);
}

Cache::~Cache() = default;

Status Cache::GetItem(std::string_view key, Item* out, CacheOp op) {
  const CallCounter counter(metrics_table(), op);
  Status s = ReadStored(*backend_, options_.key_namespace, key, out, op);
  // A value GetOrCompute stored with its record reads back as the value alone.
  if (s.ok()) s = OpenComputedRecord(out);
  counter.Finish(s);
  return s;
}

Status Cache::GetStoredItem(std::string_view key, Item* out, CacheOp op) {
  return ReadStored(*backend_, options_.key_namespace, key, out, op);
}

Status Cache::CountRefusal(CacheOp op, StoreMode mode, std::string_view key, Status s) {
  const CallCounter counter(metrics_table(), op);
  if (mode == StoreMode::kSet && s.IsTooLarge() && !key.empty()) {
    WithPrefix(options_.key_namespace, key,
               [this](std::string_view full_key) { DropStale(full_key); });
  }
  counter.Finish(s);
  return s;
}

void Cache::DropStale(std::string_view full_key) {
  // Its own outcome is not the caller's: the set's too_large is. A store that
  // is down fails both, and nothing is then read from it.
  (void)backend_->Remove(full_key);
}

void Cache::DropStaleOfBatch(std::span<const WriteOutcome> writes) {
  // Whether each key's value is stale after the batch, in the batch's order.
  std::unordered_map<std::string_view, bool> stale;
  for (const WriteOutcome& write : writes) {
    if (write.refused_as_large) {
      stale[write.full_key] = true;
    } else if (write.decided) {
      if (auto it = stale.find(write.full_key); it != stale.end()) it->second = false;
    }
  }
  std::vector<Operation> removals;
  for (const auto& [key, is_stale] : stale) {
    if (!is_stale) continue;
    Operation& removal = removals.emplace_back();
    removal.kind = OpKind::kRemove;
    removal.key = key;
  }
  if (!removals.empty()) backend_->Execute(removals);
}

void Cache::DropStaleOfSets(std::span<const std::string_view> keys,
                            std::span<const Status> outcomes) {
  std::vector<std::string> full_keys;
  full_keys.reserve(keys.size());
  for (const std::string_view key : keys) {
    full_keys.push_back(options_.key_namespace + std::string(key));
  }
  std::vector<WriteOutcome> writes;
  writes.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const bool keyed = !keys[i].empty();  // an empty key was refused and wrote nothing
    writes.push_back({full_keys[i], keyed && outcomes[i].IsTooLarge(), keyed && outcomes[i].ok()});
  }
  DropStaleOfBatch(writes);
}

Status Cache::GetDecoded(CacheOp op, std::string_view key, ItemDecoder decode, void* out) {
  const CallCounter counter(metrics_table(), op);
  Item item;
  Status s = ReadStored(*backend_, options_.key_namespace, key, &item, op);
  // A value GetOrCompute stored with its record reads back as the value alone.
  if (s.ok()) s = OpenComputedRecord(&item);
  // Counted after decoding: a value that does not decode is an error, not a hit.
  if (s.ok()) s = decode(*codec_, std::move(item), out, 0);
  counter.Finish(s);
  return s;
}

Status Cache::GetInto(std::string_view key, std::string* value) {
  // A key that lies in the string would change as the value is written into it.
  if (Overlaps(key, *value)) return GetInto(std::string(key), value);
  const CallCounter counter(metrics_table(), CacheOp::kGet);
  Item item;
  item.value.swap(*value);  // the store and the codec write into the caller's storage
  Status s = ReadStored(*backend_, options_.key_namespace, key, &item, CacheOp::kGet);
  if (s.ok()) s = OpenComputedRecord(&item);
  if (s.ok()) s = codec_->DecodeInPlace(&item);
  value->swap(item.value);
  if (!s.ok()) value->clear();  // nothing of a miss or a failed read stays behind
  counter.Finish(s);
  return s;
}

Status Cache::StoreItem(StoreMode mode, std::string_view key, ItemView item, std::optional<Ttl> ttl,
                        CacheOp op) {
  const CallCounter counter(metrics_table(), op);
  // Bytes that would read back as GetOrCompute's record are refused, so no
  // value written through a Cache is misread. Append cannot be checked (what
  // it joins is in the store).
  Status s = mode != StoreMode::kAppend &&
                     LooksLikeComputedRecord(item.value, mode == StoreMode::kPrepend)
                 ? ComputedRecordRefused()
                 : Status::OK();
  if (s.ok() && (mode == StoreMode::kAppend || mode == StoreMode::kPrepend)) {
    s = CheckJoinable(mode, key);
  }
  if (s.ok()) s = WriteItem(mode, key, item, ttl);
  counter.Finish(s);
  return s;
}

Status Cache::CheckJoinable(StoreMode mode, std::string_view key) {
  if (key.empty()) return EmptyKeyError();
  Item stored;
  // From the store itself: a near copy may predate a compressed value.
  Status s = WithPrefix(options_.key_namespace, key, [&](std::string_view full_key) {
    return BehindNearCache(*backend_).Get(full_key, &stored);
  });
  return Joinable(s, stored, mode);
}

Status Cache::Joinable(const Status& read, const Item& stored, StoreMode mode) const {
  Status s = JoinableRecord(read, stored.value, mode == StoreMode::kPrepend);
  if (s.ok() && read.ok()) s = codec_->CheckJoin(stored.flags);
  return s;
}

Status Cache::WriteItem(StoreMode mode, std::string_view key, ItemView item,
                        std::optional<Ttl> ttl) {
  const WriteOptions write{EffectiveTtl(ttl)};
  if (key.empty()) return EmptyKeyError();
  // Refused here for every store alike.
  if (write.ttl.count() < 0) return NegativeTtlError(backend_->name());
  return WithPrefix(options_.key_namespace, key, [&](std::string_view full_key) {
    Status s = backend_->Store(mode, full_key, item, write);
    if (mode == StoreMode::kSet && s.IsTooLarge()) DropStale(full_key);
    return s;
  });
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
  Status s = key.empty()
                 ? EmptyKeyError()
                 : WithPrefix(options_.key_namespace, key, [this](std::string_view full_key) {
                     return backend_->Remove(full_key);
                   });
  counter.Finish(s);
  return s;
}

Result<std::uint64_t> Cache::Incr(std::string_view key, std::uint64_t delta) {
  const CallCounter counter(metrics_table(), CacheOp::kIncr);
  std::uint64_t value = 0;
  Status s = key.empty() ? EmptyKeyError()
                         : WithPrefix(options_.key_namespace, key, [&](std::string_view full_key) {
                             return backend_->Incr(full_key, delta, &value);
                           });
  counter.Finish(s);
  if (!s.ok()) return s;
  return value;
}

Result<std::uint64_t> Cache::Decr(std::string_view key, std::uint64_t delta) {
  const CallCounter counter(metrics_table(), CacheOp::kDecr);
  std::uint64_t value = 0;
  Status s = key.empty() ? EmptyKeyError()
                         : WithPrefix(options_.key_namespace, key, [&](std::string_view full_key) {
                             return backend_->Decr(full_key, delta, &value);
                           });
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
    s = WithPrefix(options_.key_namespace, key,
                   [&](std::string_view full_key) { return backend_->Touch(full_key, ttl); });
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

std::vector<Status> Cache::GetDecodedMulti(const std::vector<std::string>& keys, ItemDecoder decode,
                                           void* out) {
  const CallCounter counter(metrics_table(), CacheOp::kGetMulti);
  const std::vector<std::string_view> views = Views(keys);
  std::vector<Status> statuses(keys.size());
  OutcomeTally tally;
  BatchPlan plan;
  plan.Plan(options_.key_namespace, views, OpKind::kGet, statuses, &tally);
  backend_->Execute(plan.operations());
  plan.CollectStatuses(statuses, nullptr);
  // Counted after decoding: a value that does not decode is an error, not a hit.
  for (std::size_t j = 0; j < plan.size(); ++j) {
    const std::size_t slot = plan.slot(j);
    Status& status = statuses[slot];
    Item& item = plan.op(j).result;
    // A value GetOrCompute stored with its record reads back as the value alone.
    if (status.ok()) status = OpenComputedRecord(&item);
    if (status.ok()) status = decode(*codec_, std::move(item), out, slot);
    tally.Count(status);
  }
  counter.Finish(tally);
  return statuses;
}

std::vector<Status> Cache::StoreItems(std::span<const std::string_view> keys,
                                      std::span<const Item> items, std::optional<Ttl> ttl,
                                      std::span<const Status> refused) {
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
    std::vector<Status> all_refused(refused.begin(), refused.end());
    all_refused.resize(refused.size() + keys.size() - accepted.size(), ComputedRecordRefused());
    const std::vector<Status> stored = StoreItems(kept_keys, kept_items, ttl, all_refused);
    std::vector<Status> statuses(keys.size(), ComputedRecordRefused());
    for (std::size_t j = 0; j < accepted.size(); ++j) statuses[accepted[j]] = stored[j];
    return statuses;
  }
  const CallCounter counter(metrics_table(), CacheOp::kSetMulti);
  std::vector<Status> statuses(keys.size());
  OutcomeTally tally;
  for (const Status& s : refused) tally.Count(s);  // keys of this call too, never sent
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
  StatsMap stats;
  if (Status s = Stats(&stats); !s.ok()) return s;
  return stats;
}

Status Cache::Stats(StatsMap* out) {
  const CallCounter counter(metrics_table(), CacheOp::kStats);
  out->clear();
  Status s = backend_->Stats(out);
  counter.Finish(s);
  return s;
}

void Cache::RecordCall(CacheOp op, std::chrono::steady_clock::time_point start,
                       const Status& status) {
  if (MetricsTable* table = metrics_table(); table != nullptr) table->Record(op, start, status);
}

void Cache::BeginCallTrace() noexcept {
  if (MetricsTable* table = metrics_table(); table != nullptr) table->BeginTrace();
}

Metrics Cache::metrics() const { return state_->metrics.Snapshot(); }

std::vector<ServerHealth> Cache::Health() const {
  std::vector<ServerHealth> servers;
  (void)backend_->Health(&servers);  // kUnsupported: a store without servers
  return servers;
}

void Cache::SetObserver(std::shared_ptr<CacheObserver> observer) {
  std::lock_guard<std::mutex> lock(state_->observers_mutex);
  state_->metrics.set_observer(observer.get());
  if (observer != nullptr) state_->observers.push_back(std::move(observer));
  MetricsTable* active = state_->metrics.active() ? &state_->metrics : nullptr;
  active_table_.store(active, std::memory_order_relaxed);
}

NearMetrics Cache::near_metrics() const { return NearCacheMetrics(*backend_); }

void Cache::ResetMetrics() { state_->metrics.Reset(); }

}  // namespace cachet
