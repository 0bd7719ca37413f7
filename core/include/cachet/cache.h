// Cache: the typed facade applications use.
//
// A Cache combines a Backend (the store, from a plugin), a Codec (typed values to
// bytes) and the [cache] settings: a key namespace (a prefix added to every key),
// a default TTL, and per-operation metrics. Reads return a Lookup<T>: hit, miss or
// error, never confusing the three. Writes return a Status.
//
// Typed values: std::string (raw bytes), std::int64_t, std::uint64_t, double,
// bool and Json documents (codec.h). Append and prepend take raw bytes.
//
// Observability: metrics() counts every operation and times a sample of them
// (metrics.h); Health() reports each server of a network store (health.h);
// metrics_format.h writes both for Prometheus or as JSON; SetObserver hands every
// call to an application's CacheObserver (observer.h).
//
// Thread safety: a Cache may be shared by any number of threads. It shares
// ownership of its Backend, which keeps the plugin library loaded.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cachet/backend.h"
#include "cachet/codec.h"
#include "cachet/config.h"
#include "cachet/export.h"
#include "cachet/health.h"
#include "cachet/item.h"
#include "cachet/metrics.h"
#include "cachet/observer.h"
#include "cachet/near_cache.h"
#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet {

// How GetOrCompute coordinates loaders and keeps what they return. The [cache]
// keys of the same names set a Cache's defaults; docs/get-or-compute.md says
// what each guarantees on each store.
struct ComputeOptions {
  // The longest `lease`, `lease_wait` and `stale` (ten years): a deadline of now
  // plus one of them must not overflow the clock. Longer ones are invalid_argument.
  static constexpr std::chrono::milliseconds kMaxDuration{std::int64_t{10} * 365 * 86400 * 1000};

  // How long a loaded value stays fresh; unset: the Cache's default_ttl.
  std::optional<Ttl> ttl;
  // > 0: one caller among all the processes sharing the store loads a missing
  // key, holding a lease in the store for at most this long (a caller that
  // dies frees it then). 0: only the threads of this process are coordinated.
  std::chrono::milliseconds lease{0};
  // How long the others wait for the lease holder's value before loading by
  // themselves; 0: as long as `lease`.
  std::chrono::milliseconds lease_wait{0};
  // > 0: for this long after a value goes stale, callers get it at once while
  // one of them refreshes it (stale-while-revalidate). Needs a TTL.
  std::chrono::milliseconds stale{0};
  // > 0: probabilistic early refresh (XFetch) with this beta: a caller reloads
  // a fresh value when now - load_time * beta * ln(rand()) >= its expiry, so a
  // hot key is refreshed by one caller before it expires. 1 is the usual
  // choice; larger refreshes earlier. Needs a TTL.
  double early_refresh = 0;
  // > 0: a loader's not_found is kept this long and returned as a miss without
  // calling the loader again (a cached miss). 0: not kept.
  Ttl negative_ttl{0};
};

struct CacheOptions {
  std::string key_namespace;  // prefix of every key, "" for none
  Ttl default_ttl{0};         // used when a write names no TTL; 0: never expires
  bool metrics = true;        // count calls and time a sample of them
  ComputeOptions compute{};   // GetOrCompute's defaults
};

class Batch;         // batch.h
class MetricsTable;  // the counters behind metrics() (internal)
class Plugin;        // plugin.h

template <class T>
struct Versioned {
  T value;
  std::uint64_t cas = 0;
};

class CACHET_EXPORT Cache {
 public:
  // Opens the store a validated-or-not Config names: validates [cache] and the
  // backend's section, loads the plugin, creates the backend and the codec, and
  // wraps the backend in an envelope if it lacks native flags or TTL.
  static Result<std::unique_ptr<Cache>> Open(Config config);

  // Everything Open checks, without creating the backend (so without
  // connecting): [cache] and the codec settings, the backend's plugin, and every
  // section against its plugin's schema and validation hook. Fills in `config`'s
  // defaults. `plugins` receives the plugins loaded; the validated sections'
  // schemas point into them, so they must outlive `config`. Open refuses exactly
  // the configs Check refuses, and for the same reason.
  static Status Check(Config* config, std::vector<std::shared_ptr<const Plugin>>* plugins);

  Cache(std::shared_ptr<Backend> backend, std::shared_ptr<const Codec> codec,
        CacheOptions options);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  template <class T = std::string>
  Lookup<T> Get(std::string_view key);
  template <class T = std::string>
  Lookup<Versioned<T>> Gets(std::string_view key);
  // Get<std::string> into the caller's string: ok (a hit), not_found or the
  // error; `*value` holds the value on a hit and is empty otherwise. The string
  // keeps its storage, so a loop that reads uncompressed values into one string
  // allocates nothing once it has grown to their size (a compressed value is
  // decompressed first, then copied in). `key` may point into `*value`.
  Status GetInto(std::string_view key, std::string* value);

  template <class T>
  Status Set(std::string_view key, const T& value, std::optional<Ttl> ttl = std::nullopt) {
    return StoreTyped(CacheOp::kSet, StoreMode::kSet, key, value, 0, ttl);
  }
  template <class T>
  Status Add(std::string_view key, const T& value, std::optional<Ttl> ttl = std::nullopt) {
    return StoreTyped(CacheOp::kAdd, StoreMode::kAdd, key, value, 0, ttl);
  }
  template <class T>
  Status Replace(std::string_view key, const T& value, std::optional<Ttl> ttl = std::nullopt) {
    return StoreTyped(CacheOp::kReplace, StoreMode::kReplace, key, value, 0, ttl);
  }
  // kExists if the item changed since `cas` was read, kNotFound if it is gone.
  template <class T>
  Status Cas(std::string_view key, const T& value, std::uint64_t cas,
             std::optional<Ttl> ttl = std::nullopt) {
    return StoreTyped(CacheOp::kCas, StoreMode::kCas, key, value, cas, ttl);
  }
  Status Append(std::string_view key, std::string_view bytes);
  Status Prepend(std::string_view key, std::string_view bytes);
  Status Remove(std::string_view key);

  // The counter's new value. kNotFound when the key is absent.
  Result<std::uint64_t> Incr(std::string_view key, std::uint64_t delta = 1);
  Result<std::uint64_t> Decr(std::string_view key, std::uint64_t delta = 1);
  Status Touch(std::string_view key, Ttl ttl);

  // One Lookup per key, in order. Keys on different servers are fetched at once.
  template <class T = std::string>
  std::vector<Lookup<T>> GetMulti(const std::vector<std::string>& keys);
  template <class T>
  std::vector<Status> SetMulti(const std::vector<std::pair<std::string, T>>& entries,
                               std::optional<Ttl> ttl = std::nullopt);
  std::vector<Status> RemoveMulti(const std::vector<std::string>& keys);

  // Batch reads into the caller's buffers, for loops that read many values
  // again and again. After the call `statuses` and the output vector have
  // keys.size() entries that follow `keys`: ok for a hit, not_found for a miss,
  // anything else an error (and an empty value). The strings already in the
  // output vector are written in place, so they keep their capacity from call to
  // call: once they have grown to the values' sizes, a loop that passes the same
  // vectors allocates nothing per call, and a store that reads values straight
  // into them copies each value once. The namespace applies as for GetMulti; keys
  // on different servers are fetched at once. Counted in metrics() as get_multi.
  //
  // GetItemsInto hands back the stored Items (bytes, flags and cas) as the codec
  // left them. GetMultiInto decodes each hit to its string value, as
  // GetMulti<std::string> does; a raw string (flags 0) costs no decoding at all.
  void GetItemsInto(std::span<const std::string_view> keys, std::vector<Item>* items,
                    std::vector<Status>* statuses);
  void GetMultiInto(std::span<const std::string_view> keys, std::vector<std::string>* values,
                    std::vector<Status>* statuses);

  // Sends every operation of `batch` (batch.h), one round trip per server on
  // stores that pipeline, and leaves each operation's outcome in it. Each
  // operation counts in metrics() as its single call. A batch made for another
  // Cache is refused whole (each operation answers invalid_argument).
  void Run(Batch& batch);

  Status Flush();
  // Every server's statistics ("host:port name" with several servers); all or
  // nothing: a server that does not answer fails the call.
  Result<StatsMap> Stats();
  // The statistics of the servers that answered, in *out, and the failure of
  // one that did not (naming it): what a dashboard shows while a server is down.
  Status Stats(StatsMap* out);

  // Returns the cached value, or runs `loader` (a callable returning Result<T>)
  // on a miss, stores its value and returns it. Stampede protection: while one
  // caller loads a key, the others asking for it wait for its value instead of
  // loading too: the threads of this process always, every process sharing the
  // store with `lease` (ComputeOptions above; docs/get-or-compute.md). If the
  // store fails on the read, the loader still runs and its value is returned
  // (the failure shows in metrics). A loader error is returned as the Lookup's
  // error, its not_found as a miss; an exception from the loader reaches the
  // caller, and the key is free for the next one. Counted once as
  // get_or_compute (hit, miss, or the read's error) and each loader run as load
  // (ok, or the loader's or the write-back's error); its reads and writes are
  // not counted again as get or set. This overload uses the Cache's defaults
  // (the [cache] section) with `ttl` when given.
  template <class T, class Loader>
  Lookup<T> GetOrCompute(std::string_view key, Loader&& loader,
                         std::optional<Ttl> ttl = std::nullopt);
  template <class T, class Loader>
  Lookup<T> GetOrCompute(std::string_view key, Loader&& loader, const ComputeOptions& options);

  // GetOrCompute on raw Items: `load` fills its Item (bytes and flags, stored as
  // they are) or returns why not. On ok `*out` holds the cached or loaded item;
  // not_found is a miss (a cached one, or the loader's).
  using ItemLoader = std::function<Status(Item*)>;
  Status GetOrComputeItem(std::string_view key, const ItemLoader& load,
                          const ComputeOptions& options, Item* out);

  // Raw access, bypassing the codec (namespace, TTL default and metrics apply).
  // StoreItem (like every write) refuses with invalid_argument bytes that would
  // read back as GetOrCompute's record (docs/get-or-compute.md).
  Status GetItem(std::string_view key, Item* out, CacheOp op = CacheOp::kGet);
  Status StoreItem(StoreMode mode, std::string_view key, ItemView item,
                   std::optional<Ttl> ttl = std::nullopt, CacheOp op = CacheOp::kSet);

  // A snapshot of the counters since the Cache opened or the last ResetMetrics.
  Metrics metrics() const;
  void ResetMetrics();
  // The near cache's counters ([cache] near_cache, near_cache.h); enabled is
  // false when there is none.
  NearMetrics near_metrics() const;

  // The health of each server of a network store, in configuration order;
  // empty for a store without servers (the memory store).
  std::vector<ServerHealth> Health() const;

  // Registers `observer` (null: none), which then sees every call as it ends.
  // The Cache keeps every observer it was given alive until it is destroyed, so
  // one may be replaced while other threads make calls.
  void SetObserver(std::shared_ptr<CacheObserver> observer);

  Backend& backend() noexcept { return *backend_; }
  // The store's name as in the config ("memory", "memcached", ...).
  std::string_view store_name() const noexcept { return backend_->name(); }
  const Codec& codec() const noexcept { return *codec_; }
  const CacheOptions& options() const noexcept { return options_; }

 private:
  // A call refused before the store saw it (a value the codec refuses) counts
  // as a call with an error, as an empty key does and as in a Batch; returns `s`.
  // A set refused as too large still removes the key's older value (DropStale).
  Status CountRefusal(CacheOp op, StoreMode mode, std::string_view key, Status s);
  // A set refused as too large (by the codec or the store) removes what the key
  // held, as memcached's server does: the value it was to replace must not be
  // read afterwards as if it were current. `full_key` has the namespace.
  void DropStale(std::string_view full_key);
  // The same for a batch's operations in order: each key with a set refused as
  // too large and no later write that decided its value (a set, add, replace or
  // cas that went through, a remove) is removed after the batch, in one round.
  struct WriteOutcome {
    std::string_view full_key;
    bool refused_as_large;  // a set whose outcome is too_large
    bool decided;           // a write that replaced or removed the value
  };
  void DropStaleOfBatch(std::span<const WriteOutcome> writes);
  // A run Batch's operations as DropStaleOfBatch reads them (cache_run.cpp).
  static std::vector<WriteOutcome> WriteOutcomes(const Batch& batch);
  // DropStaleOfBatch for SetMulti: every entry a set, `keys` without the namespace.
  void DropStaleOfSets(std::span<const std::string_view> keys, std::span<const Status> outcomes);
  template <class T>
  Status StoreTyped(CacheOp op, StoreMode mode, std::string_view key, const T& value,
                    std::uint64_t cas, std::optional<Ttl> ttl);

  // StoreItem without counting and without its check that the bytes do not
  // look like GetOrCompute's record: GetOrCompute's writes, which store such records.
  Status WriteItem(StoreMode mode, std::string_view key, ItemView item, std::optional<Ttl> ttl);
  // Before an append or prepend: reads the stored value, and refuses to join
  // bytes to a record GetOrCompute stored (a prepend would bury its header, an
  // append to a cached miss would stay unseen), to a compressed value or to a
  // serialized document (Codec::CheckJoin). Another writer may still store
  // one between this read and the write.
  Status CheckJoinable(StoreMode mode, std::string_view key);
  // CheckJoinable's verdict on what its read found: `read`'s status, `stored`.
  Status Joinable(const Status& read, const Item& stored, StoreMode mode) const;
  // Backend::Execute of a batch's operations, its appends and prepends checked
  // as CheckJoinable does: the values they join are read in one round before
  // each stretch of the batch, a stretch ending where an earlier write of the
  // batch replaced a joined key (RunStretchChecked runs one).
  void ExecuteJoinsChecked(std::span<Operation> operations);
  void RunStretchChecked(std::span<Operation> operations);
  // Decodes `item` into element `index` of the typed output `out`; the
  // templates pass one of these, so that reads are counted after decoding (a
  // value that does not decode is an error, not a hit).
  using ItemDecoder = Status (*)(const Codec& codec, Item&& item, void* out, std::size_t index);
  template <class T>
  static Status DecodeValue(const Codec& codec, Item&& item, void* out, std::size_t index) {
    return codec.Decode(std::move(item), &static_cast<T*>(out)[index]);
  }
  template <class T>
  static Status DecodeVersioned(const Codec& codec, Item&& item, void* out, std::size_t) {
    auto* versioned = static_cast<Versioned<T>*>(out);
    versioned->cas = item.cas;
    return codec.Decode(std::move(item), &versioned->value);
  }
  // Reads `key` and decodes it into `out`, counted as `op`; a value stored by
  // GetOrCompute is read without its record.
  Status GetDecoded(CacheOp op, std::string_view key, ItemDecoder decode, void* out);
  // GetOrComputeItem, and with `decode` the item decoded into `decoded` before
  // the call is counted: a cached value that does not decode is its error.
  Status ComputeCounted(std::string_view key, const ItemLoader& load,
                        const ComputeOptions& options, Item* item, ItemDecoder decode,
                        void* decoded);
  // Fetches and decodes many keys into out[0..keys.size()); the statuses follow `keys`.
  std::vector<Status> GetDecodedMulti(const std::vector<std::string>& keys, ItemDecoder decode,
                                      void* out);
  // Counts one call the caller timed itself, from `start`.
  void RecordCall(CacheOp op, std::chrono::steady_clock::time_point start, const Status& status);
  // Runs a GetOrCompute loader into an emptied `out`; one that throws is
  // counted as a `load` (code internal) before the exception goes on.
  Status RunLoader(const ItemLoader& load, Item* out, std::chrono::steady_clock::time_point start);
  // Starts the observer's note of the servers a call timed by its caller uses.
  void BeginCallTrace() noexcept;
  // SetMulti's batch of encoded items. `refused`: the outcomes of the keys the
  // codec refused before it, counted in the same call.
  std::vector<Status> StoreItems(std::span<const std::string_view> keys,
                                 std::span<const Item> items, std::optional<Ttl> ttl,
                                 std::span<const Status> refused = {});

  // What GetOrComputeItem found stored under a key (cache_compute.cpp).
  struct Cached;
  // What one GetOrCompute call counts in metrics: its first read that missed,
  // and whether it ran the loader (cache_compute.cpp).
  struct ComputeCall;
  Status ReadCached(ComputeCall& call, std::string_view key, const ComputeOptions& options,
                    Cached* cached);
  // Runs `load` and stores what it returns (a value, or a cached miss).
  // `stored`, if given, gets the write's status.
  Status LoadAndStore(ComputeCall& call, std::string_view key, const ItemLoader& load,
                      const ComputeOptions& options, Item* out, Status* stored = nullptr);
  // Refreshes a stale or early-expiring value if no one else is; `cached` gets
  // the new value when this caller refreshed it.
  void TryRefresh(ComputeCall& call, std::string_view key, const ItemLoader& load,
                  const ComputeOptions& options, Cached* cached);
  // The missing-key path: under this process's claim, with the store's lease.
  Status LoadMissing(ComputeCall& call, std::string_view key, const ItemLoader& load,
                     const ComputeOptions& options, Item* out);
  // A load when the store cannot arbitrate (it fails): one thread of this
  // process loads, the others wait for it (bounded) and take its value.
  Status LoadOnceInProcess(ComputeCall& call, std::string_view key, const ItemLoader& load,
                           const ComputeOptions& options, Item* out);
  // GetOrComputeItem() with a lease on a store with kNativeLease: the store's
  // own leases, taken in the read's round trip (Backend::LeaseGet).
  Status GetOrComputeNative(ComputeCall& call, std::string_view key, const ItemLoader& load,
                            const ComputeOptions& options, Item* out);
  // A refresh of `*cached` under the store's lease, if nobody holds it: an
  // early refresh drawn, a stale value the store does not count stale yet, or
  // one past this caller's stale window. Nothing when another caller holds the
  // lease; else ok with the new value in `*cached`, or the load's error.
  std::optional<Status> RefreshNative(ComputeCall& call, std::string_view key,
                                      std::string_view full_key, const ItemLoader& load,
                                      const ComputeOptions& options, Cached* cached);
  // Reads `key` as stored, GetOrCompute's record included; not counted.
  Status GetStoredItem(std::string_view key, Item* out, CacheOp op);
  // GetOrComputeItem's work, counted by it.
  Status ComputeItem(ComputeCall& call, std::string_view key, const ItemLoader& load,
                     const ComputeOptions& options, Item* out);

  Ttl EffectiveTtl(std::optional<Ttl> ttl) const { return ttl ? *ttl : options_.default_ttl; }

  // The metrics' counters, or nullptr when metrics are off and no observer is set.
  MetricsTable* metrics_table() noexcept { return active_table_.load(std::memory_order_relaxed); }

  struct State;  // namespacing buffers, metrics counters, in-flight loads
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<const Codec> codec_;
  CacheOptions options_;
  std::unique_ptr<State> state_;
  std::atomic<MetricsTable*> active_table_{nullptr};
};

// ---- template bodies ------------------------------------------------------

template <class T>
Lookup<T> Cache::Get(std::string_view key) {
  T value{};
  Status s = GetDecoded(CacheOp::kGet, key, &DecodeValue<T>, &value);
  if (!s.ok()) return Lookup<T>::FromStatus(std::move(s));
  return Lookup<T>::Hit(std::move(value));
}

template <class T>
Lookup<Versioned<T>> Cache::Gets(std::string_view key) {
  Versioned<T> v{T{}, 0};
  Status s = GetDecoded(CacheOp::kGets, key, &DecodeVersioned<T>, &v);
  if (!s.ok()) return Lookup<Versioned<T>>::FromStatus(std::move(s));
  return Lookup<Versioned<T>>::Hit(std::move(v));
}

namespace detail {
// Maps the types a user may pass to the Codec's overloads.
template <class T>
decltype(auto) CodecArg(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value;
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return std::string_view(value);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<std::int64_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<std::uint64_t>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(value);
  } else {
    return static_cast<const Json&>(value);
  }
}
}  // namespace detail

template <class T>
Status Cache::StoreTyped(CacheOp op, StoreMode mode, std::string_view key, const T& value,
                         std::uint64_t cas, std::optional<Ttl> ttl) {
  if constexpr (std::is_same_v<decltype(detail::CodecArg(value)), std::string_view>) {
    // Strings are stored from the caller's bytes, without a copy into an Item.
    ItemView view;
    Status s = codec_->EncodeView(detail::CodecArg(value), &view);
    if (!s.ok()) return CountRefusal(op, mode, key, std::move(s));
    view.cas = cas;
    return StoreItem(mode, key, view, ttl, op);
  } else {
    Item item;
    Status s = codec_->Encode(detail::CodecArg(value), &item);
    if (!s.ok()) return CountRefusal(op, mode, key, std::move(s));
    item.cas = cas;
    return StoreItem(mode, key, item, ttl, op);
  }
}

template <class T>
std::vector<Lookup<T>> Cache::GetMulti(const std::vector<std::string>& keys) {
  // An array, not a vector: std::vector<bool> has no data().
  const std::unique_ptr<T[]> values = std::make_unique<T[]>(keys.size());
  std::vector<Status> statuses = GetDecodedMulti(keys, &DecodeValue<T>, values.get());
  std::vector<Lookup<T>> out;
  out.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out.push_back(statuses[i].ok() ? Lookup<T>::Hit(std::move(values[i]))
                                   : Lookup<T>::FromStatus(std::move(statuses[i])));
  }
  return out;
}

template <class T>
std::vector<Status> Cache::SetMulti(const std::vector<std::pair<std::string, T>>& entries,
                                    std::optional<Ttl> ttl) {
  // Entries that fail to encode keep their error and are left out of the batch,
  // so a bad value never overwrites what the store holds.
  std::vector<Status> out(entries.size());
  std::vector<std::string_view> keys;
  std::vector<Item> items;
  std::vector<std::size_t> slots;
  keys.reserve(entries.size());
  items.reserve(entries.size());
  slots.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Item item;
    Status s = codec_->Encode(detail::CodecArg(entries[i].second), &item);
    if (!s.ok()) {
      out[i] = std::move(s);
      continue;
    }
    keys.push_back(entries[i].first);
    items.push_back(std::move(item));
    slots.push_back(i);
  }
  std::vector<Status> refused;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!out[i].ok()) refused.push_back(out[i]);
  }
  std::vector<Status> stored = StoreItems(keys, items, ttl, refused);
  for (std::size_t j = 0; j < slots.size(); ++j) out[slots[j]] = std::move(stored[j]);
  if (std::any_of(out.begin(), out.end(), [](const Status& s) { return s.IsTooLarge(); })) {
    std::vector<std::string_view> all_keys;
    all_keys.reserve(entries.size());
    for (const auto& entry : entries) all_keys.push_back(entry.first);
    DropStaleOfSets(all_keys, out);
  }
  return out;
}

template <class T, class Loader>
Lookup<T> Cache::GetOrCompute(std::string_view key, Loader&& loader, std::optional<Ttl> ttl) {
  ComputeOptions options = options_.compute;
  if (ttl) options.ttl = ttl;
  return GetOrCompute<T>(key, std::forward<Loader>(loader), options);
}

template <class T, class Loader>
Lookup<T> Cache::GetOrCompute(std::string_view key, Loader&& loader,
                              const ComputeOptions& options) {
  const ItemLoader load = [&](Item* item) -> Status {
    Result<T> loaded = loader();
    if (!loaded.ok()) return loaded.status();
    return codec_->Encode(detail::CodecArg(loaded.value()), item);
  };
  Item item;
  T value{};
  if (Status s = ComputeCounted(key, load, options, &item, &DecodeValue<T>, &value); !s.ok()) {
    return Lookup<T>::FromStatus(std::move(s));
  }
  return Lookup<T>::Hit(std::move(value));
}

}  // namespace cachet
