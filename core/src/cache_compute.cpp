// Cache::GetOrComputeItem: GetOrCompute's coordination of loaders. Threads of
// one process wait on the LoadCoordinator; processes sharing a store take a
// lease in it: the store's own (Backend::LeaseGet) where it declares
// kNativeLease, else an add of "<key>#lease" with the lease's TTL. Either way a
// holder ends only its own lease (a random token per claim). Values carry a
// ComputedRecord (computed_record.h) when stale-while-revalidate, early refresh
// or cached misses need their expiry and load time.
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>

#include "cache_state.h"
#include "computed_record.h"
#include "prefixed_key.h"

namespace cachet {

// What a read found under a key, as GetOrCompute sees it.
struct Cache::Cached {
  enum class State { kAbsent, kFresh, kStale };
  State state = State::kAbsent;
  bool negative = false;    // a cached miss: the loader said not_found
  bool has_record = false;  // stored with a ComputedRecord (else a plain value)
  ComputedRecord record;
  Item item;  // the value: its bytes as the codec made them, and its flags

  // Opens the record of `item` as just read: the state it is in under `options`.
  State Decode(const ComputeOptions& options);

  // The caller's answer: the value, or a miss for a cached miss.
  Status TakeInto(Item* out) {
    if (negative) return Status::NotFound();
    *out = std::move(item);
    return Status::OK();
  }
};

struct Cache::ComputeCall {
  // The first read that did not find a value (not_found, or the store's error);
  // ok while every read found one.
  Status missed;
  bool ran_loader = false;

  // Notes a read that found nothing usable: `read` itself, or a miss if the
  // store answered but the value had expired.
  void NoteMiss(const Status& read) {
    if (missed.ok()) missed = read.ok() ? Status::NotFound() : read;
  }
  // The call's outcome in metrics: a miss (or the read's error) if it loaded,
  // else what it returns (a hit, a cached miss, or an error).
  Status Outcome(const Status& returned) const { return ran_loader ? missed : returned; }
};

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// The longest pause between two polls of a waiter, and the lease a refresh
// takes when no lease is configured.
constexpr milliseconds kMaxPollPause{50};
constexpr milliseconds kRefreshLease{kLoadWaitLimit};
// How much longer than its expiry (and stale window) a record is kept.
constexpr Ttl kRecordSlack{1000};

// How long a caller waits, in all, for other threads of the process loading its
// key: with a lease as for another process's (lease_wait, else lease), at most
// kLoadWaitLimit.
milliseconds InProcessWait(const ComputeOptions& options) {
  if (options.lease.count() <= 0) return kLoadWaitLimit;
  const milliseconds wait = options.lease_wait.count() > 0 ? options.lease_wait : options.lease;
  return std::min<milliseconds>(wait, kLoadWaitLimit);
}

std::uint64_t NowMs() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<milliseconds>(since_epoch).count());
}

// `base` + `extra`, saturating at the largest Ttl.
Ttl SaturatingAdd(Ttl base, Ttl extra) {
  return base > Ttl::max() - extra ? Ttl::max() : base + extra;
}

// The XFetch rule: refresh when now - load_ms * beta * ln(u) >= fresh_until,
// with u uniform in (0, 1]. A slower load or a larger beta refreshes earlier.
bool EarlyRefreshDue(std::uint64_t now_ms, const ComputedRecord& record, double beta) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const double u = 1.0 - std::uniform_real_distribution<double>(0.0, 1.0)(random);
  const double ahead = static_cast<double>(record.load_ms) * beta * -std::log(u);
  return static_cast<double>(now_ms) + ahead >= static_cast<double>(record.fresh_until_ms);
}

std::string LeaseKey(std::string_view key) { return std::string(key) + "#lease"; }

// What a lease holds: a token unique to one claim, so a holder ends its own
// lease and never another's (two processes may share a pid across hosts or
// containers). 128 bits from the kernel, in hex, after a prefix that tells a
// person reading the store what the key is.
std::string NewLeaseOwner() {
  unsigned char bits[16];
  if (::getrandom(bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits)) {
    std::random_device device;  // a kernel without getrandom(2)
    for (unsigned char& byte : bits) byte = static_cast<unsigned char>(device());
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string owner = "cachet lease ";
  for (unsigned char byte : bits) {
    owner += kHex[byte >> 4];
    owner += kHex[byte & 15];
  }
  return owner;
}

enum class LeaseOutcome { kTaken, kHeldElsewhere, kUnavailable };

LeaseOutcome TakeLease(Cache& cache, const std::string& lease_key, const std::string& owner,
                       milliseconds lease) {
  Status s =
      cache.StoreItem(StoreMode::kAdd, lease_key, ItemView(owner), Ttl{lease}, CacheOp::kAdd);
  if (s.ok()) return LeaseOutcome::kTaken;
  return s.IsNotStored() ? LeaseOutcome::kHeldElsewhere : LeaseOutcome::kUnavailable;
}

// Gives a taken lease back when it goes out of scope, a throwing loader
// included: removes the lease key if it still holds this owner's token. The
// check and the removal are two calls (the Backend has no compare-and-delete),
// so a lease that lapses and is taken by another caller in that one round trip
// can still be removed; one that lapsed earlier is left to its new holder.
class HeldLease {
 public:
  HeldLease(Cache* cache, std::string lease_key, const std::string& owner)
      : cache_(cache), key_(std::move(lease_key)), owner_(owner) {}
  ~HeldLease() {
    Item held;
    if (cache_->GetItem(key_, &held).ok() && held.value == owner_) (void)cache_->Remove(key_);
  }
  HeldLease(const HeldLease&) = delete;
  HeldLease& operator=(const HeldLease&) = delete;

 private:
  Cache* cache_;  // outlives the lease
  std::string key_;
  const std::string& owner_;  // the caller's token, outlives the lease
};

// Ends a lease the store granted (Backend::LeaseGet) on the way out, a
// throwing loader included, as `end` says by then; the ticket makes the store
// end this lease only, not one another caller won after it lapsed.
class NativeLease {
 public:
  NativeLease(Backend* backend, std::string_view full_key, LeaseTicket ticket,
              LeaseEnd if_abandoned)
      : end(if_abandoned), backend_(backend), key_(full_key), ticket_(ticket) {}
  ~NativeLease() { (void)backend_->EndLease(key_, ticket_, end); }
  NativeLease(const NativeLease&) = delete;
  NativeLease& operator=(const NativeLease&) = delete;
  LeaseEnd end;

 private:
  Backend* backend_;  // outlives the lease
  std::string_view key_;
  LeaseTicket ticket_;  // its owner's bytes outlive the lease
};

// Whether loaded values carry a ComputedRecord under `o`.
bool NeedsRecord(const ComputeOptions& o) {
  return o.stale.count() > 0 || o.early_refresh > 0 || o.negative_ttl.count() > 0;
}

Status CheckOptions(const ComputeOptions& o) {
  if (o.lease.count() < 0 || o.lease_wait.count() < 0 || o.stale.count() < 0 ||
      o.negative_ttl.count() < 0 || (o.ttl && o.ttl->count() < 0)) {
    return Status::InvalidArgument("GetOrCompute: durations must not be negative");
  }
  if (o.lease > ComputeOptions::kMaxDuration || o.lease_wait > ComputeOptions::kMaxDuration ||
      o.stale > ComputeOptions::kMaxDuration) {
    return Status::InvalidArgument("GetOrCompute: lease, lease_wait and stale are at most " +
                                   std::to_string(ComputeOptions::kMaxDuration.count()) + " ms");
  }
  if (!(o.early_refresh >= 0) || !std::isfinite(o.early_refresh)) {
    return Status::InvalidArgument("GetOrCompute: early_refresh must be a finite number >= 0");
  }
  return Status::OK();
}

// What metrics record for a loader that threw: an error, not cachet's answer.
Status LoaderThrew() { return Status::Internal("GetOrCompute: the loader threw"); }

// How a native lease ends after its holder's load: kept when the store took
// the new value or the cached miss; the key deleted (kAbandonMiss, which only
// hits the item the lease was won on) when the loader says the row is gone and
// nothing was stored, so no one reads the old value any more; else `otherwise`.
LeaseEnd LeaseEndAfter(const Status& loaded, const Status& stored, LeaseEnd otherwise) {
  if (stored.ok()) return LeaseEnd::kKept;
  if (loaded.IsNotFound()) return LeaseEnd::kAbandonMiss;
  return otherwise;
}

}  // namespace

Status Cache::RunLoader(const ItemLoader& load, Item* out, SteadyClock::time_point start) {
  // The loader fills an empty item: a caller's reused Item must not lend it
  // another value's flags (a compressed bit, a type) or CAS.
  out->value.clear();
  out->flags = 0;
  out->cas = 0;
  try {
    return load(out);
  } catch (...) {
    RecordCall(CacheOp::kLoad, start, LoaderThrew());
    throw;
  }
}

Status Cache::GetOrComputeItem(std::string_view key, const ItemLoader& load,
                               const ComputeOptions& options, Item* out) {
  return ComputeCounted(key, load, options, out, nullptr, nullptr);
}

Status Cache::ComputeCounted(std::string_view key, const ItemLoader& load,
                             const ComputeOptions& options, Item* item, ItemDecoder decode,
                             void* decoded) {
  // Counted once as get_or_compute, its loads apart as load; its own reads and
  // writes are not counted. A typed call's value is decoded first, so one that
  // does not decode counts as the error it is, not as a hit.
  const auto start = SteadyClock::now();
  BeginCallTrace();
  ComputeCall call;
  Status s;
  try {
    s = ComputeItem(call, key, load, options, item);
  } catch (...) {
    RecordCall(CacheOp::kGetOrCompute, start, LoaderThrew());  // the exception is the answer
    throw;
  }
  if (s.ok() && decode != nullptr) s = decode(*codec_, std::move(*item), decoded, 0);
  RecordCall(CacheOp::kGetOrCompute, start, call.Outcome(s));
  return s;
}

Status Cache::ComputeItem(ComputeCall& call, std::string_view key, const ItemLoader& load,
                          const ComputeOptions& options, Item* out) {
  if (key.empty()) return Status::InvalidArgument("empty key");
  if (Status s = CheckOptions(options); !s.ok()) return s;
  // A store with its own leases arbitrates every caller, threads included.
  if (options.lease.count() > 0 && backend_->capabilities().has(Capability::kNativeLease)) {
    return GetOrComputeNative(call, key, load, options, out);
  }
  const std::string owned_key(key);
  Cached cached;
  // Waits for other threads' loads end together (InProcessWait from the first).
  std::optional<SteadyClock::time_point> wait_until;
  std::optional<Item> shared;  // the value a thread whose load this one waited for loaded
  // Bounded: each pass returns, or waits for another thread's load to end and
  // reads again; after the third wait, or the wait's end, it reads once more.
  for (int attempt = 0;; ++attempt) {
    // A store that fails counts as absent: the loader still runs. A key the
    // store refuses is the caller's error, and nothing is loaded for it.
    const Status read = ReadCached(call, key, options, &cached);
    if (read.IsInvalidArgument()) return read;
    // The store fails, and the thread this one waited for loaded the key: its value.
    if (shared && cached.state == Cached::State::kAbsent && read.IsError()) {
      *out = std::move(*shared);
      return Status::OK();
    }
    if (cached.state == Cached::State::kFresh) {
      if (options.early_refresh > 0 && cached.has_record && !cached.negative &&
          cached.record.fresh_until_ms != 0 &&
          EarlyRefreshDue(NowMs(), cached.record, options.early_refresh)) {
        TryRefresh(call, key, load, options, &cached);
      }
      return cached.TakeInto(out);
    }
    if (cached.state == Cached::State::kStale) {
      // One caller refreshes; everyone else gets the stale value at once.
      TryRefresh(call, key, load, options, &cached);
      return cached.TakeInto(out);
    }
    // Past the waits the key is claimed only if free; a wait that ends means
    // another thread's load ended: read again.
    if (!wait_until) wait_until = SteadyClock::now() + InProcessWait(options);
    const bool waited_enough = attempt == 3 || SteadyClock::now() >= *wait_until;
    if (waited_enough ? !state_->loads.TryBegin(owned_key)
                      : !state_->loads.Begin(owned_key, *wait_until, &shared)) {
      if (waited_enough) break;
      continue;
    }
    // Released on every way out, a throwing loader included, so waiters retry.
    LoadCoordinator::Claim claim(&state_->loads, owned_key);
    const Status loaded = LoadMissing(call, key, load, options, out);
    if (loaded.ok()) claim.Publish(*out);  // for waiters whose store reads fail
    return loaded;
  }
  // Loads by other threads kept failing to store: load without the claim, and
  // count it as a load like any other.
  call.ran_loader = true;
  const auto started = SteadyClock::now();
  Status loaded = RunLoader(load, out, started);
  RecordCall(CacheOp::kLoad, started, loaded);
  return loaded;
}

Status Cache::ReadCached(ComputeCall& call, std::string_view key, const ComputeOptions& options,
                         Cached* cached) {
  cached->state = Cached::State::kAbsent;
  Status s = GetStoredItem(key, &cached->item, CacheOp::kGet);
  if (s.ok()) cached->Decode(options);
  if (cached->state == Cached::State::kAbsent) call.NoteMiss(s);
  return s;
}

Cache::Cached::State Cache::Cached::Decode(const ComputeOptions& options) {
  negative = false;
  has_record = false;
  std::string_view value;
  if (!DecodeComputedRecord(item.value, &record, &value)) {
    // A plain value: fresh for as long as the store keeps it.
    return state = State::kFresh;
  }
  has_record = true;
  negative = record.kind == ComputedRecord::Kind::kNotFound;
  item.value.erase(0, kComputedHeaderSize);
  const std::uint64_t fresh_until = record.fresh_until_ms;
  const std::uint64_t now = NowMs();
  if (fresh_until == 0 || now < fresh_until) return state = State::kFresh;
  // Stale only within this caller's window: the store keeps a record a little
  // longer, and its writer's window may have been longer.
  if (!negative && options.stale.count() > 0 &&
      now - fresh_until < static_cast<std::uint64_t>(options.stale.count())) {
    return state = State::kStale;
  }
  // Else absent: past its expiry (and window), still kept by the store.
  return state = State::kAbsent;
}

Status Cache::LoadAndStore(ComputeCall& call, std::string_view key, const ItemLoader& load,
                           const ComputeOptions& options, Item* out, Status* stored) {
  Status ignored;
  if (stored == nullptr) stored = &ignored;
  *stored = Status::NotStored("the loader returned nothing to store");
  const auto started = SteadyClock::now();
  call.ran_loader = true;
  Status s = RunLoader(load, out, started);
  const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - started);
  const bool negative = s.IsNotFound() && options.negative_ttl.count() > 0;
  if (!s.ok() && !negative) {
    RecordCall(CacheOp::kLoad, started, s);
    return s;  // nothing is stored for an error
  }

  const Ttl ttl = negative ? options.negative_ttl : EffectiveTtl(options.ttl);
  // A loaded value that looks like a record itself is kept in one, so it reads
  // back as it was loaded.
  const bool needs_record = negative || options.stale.count() > 0 || options.early_refresh > 0 ||
                            LooksLikeComputedRecord(out->value);
  if (!needs_record) {
    *stored = WriteItem(StoreMode::kSet, key, *out, ttl);  // a failed write still returns the value
    RecordCall(CacheOp::kLoad, started, stored->ok() ? s : *stored);
    return s;
  }
  ComputedRecord record;
  record.kind = negative ? ComputedRecord::Kind::kNotFound : ComputedRecord::Kind::kValue;
  record.fresh_until_ms = ttl.count() > 0 ? NowMs() + static_cast<std::uint64_t>(ttl.count()) : 0;
  record.load_ms = static_cast<std::uint32_t>(
      std::min<std::int64_t>(took.count(), std::numeric_limits<std::uint32_t>::max()));
  // The record says when the value (or the cached miss) goes stale; the store
  // keeps it through its stale window and a little longer, because stores with
  // second resolution (memcached) may drop an item up to a second before its
  // TTL. 0 stays "never expires".
  const Ttl window = negative ? Ttl{0} : options.stale;
  const Ttl keep = ttl.count() == 0 ? ttl : SaturatingAdd(SaturatingAdd(ttl, window), kRecordSlack);
  std::string bytes;
  EncodeComputedRecord(record, negative ? std::string_view() : std::string_view(out->value),
                       &bytes);
  *stored = WriteItem(StoreMode::kSet, key, ItemView(bytes, negative ? 0 : out->flags), keep);
  // Counted as load: the loader's outcome, or the write-back's error.
  RecordCall(CacheOp::kLoad, started, stored->ok() ? s : *stored);
  return s;
}

void Cache::TryRefresh(ComputeCall& call, std::string_view key, const ItemLoader& load,
                       const ComputeOptions& options, Cached* cached) {
  const std::string owned_key(key);
  if (!state_->loads.TryBegin(owned_key)) return;  // a thread of this process refreshes it
  const LoadCoordinator::Claim claim(&state_->loads, owned_key);
  // One refresher in the whole fleet: the lease, non-blocking.
  const std::string lease_key = LeaseKey(key);
  const milliseconds lease = options.lease.count() > 0 ? options.lease : kRefreshLease;
  const std::string owner = NewLeaseOwner();
  const LeaseOutcome taken = TakeLease(*this, lease_key, owner, lease);
  if (taken == LeaseOutcome::kHeldElsewhere) return;
  std::optional<HeldLease> held;
  if (taken == LeaseOutcome::kTaken) held.emplace(this, lease_key, owner);
  // Another caller may have refreshed it between our read and our lease.
  Cached now;
  if (ReadCached(call, key, options, &now).ok() && now.state != Cached::State::kAbsent &&
      (!now.has_record || now.record.fresh_until_ms != cached->record.fresh_until_ms)) {
    *cached = std::move(now);
    return;
  }
  Item fresh;
  Status s = LoadAndStore(call, key, load, options, &fresh);
  if (s.ok()) {
    cached->item = std::move(fresh);
    cached->negative = false;
  } else if (s.IsNotFound()) {
    cached->negative = true;  // the loader says it is gone now
  }
  // Any other error: the caller still gets the value it read.
}

Status Cache::LoadMissing(ComputeCall& call, std::string_view key, const ItemLoader& load,
                          const ComputeOptions& options, Item* out) {
  // Re-check under the claim: another loader may have finished just before it.
  Cached cached;
  (void)ReadCached(call, key, options, &cached);
  if (cached.state != Cached::State::kAbsent) return cached.TakeInto(out);
  if (options.lease.count() <= 0) return LoadAndStore(call, key, load, options, out);

  const std::string lease_key = LeaseKey(key);
  const std::string owner = NewLeaseOwner();
  const milliseconds wait = options.lease_wait.count() > 0 ? options.lease_wait : options.lease;
  const auto deadline = SteadyClock::now() + wait;
  milliseconds pause{2};
  // Bounded by `deadline`: every pass sleeps, and the last one loads.
  for (;;) {
    const LeaseOutcome taken = TakeLease(*this, lease_key, owner, options.lease);
    if (taken == LeaseOutcome::kTaken) {
      const HeldLease held(this, lease_key, owner);
      // The previous holder may have stored its value just before it let go.
      (void)ReadCached(call, key, options, &cached);
      if (cached.state != Cached::State::kAbsent) return cached.TakeInto(out);
      return LoadAndStore(call, key, load, options, out);
    }
    // A store that cannot take the lease (an error) does not stop the load.
    if (taken == LeaseOutcome::kUnavailable) return LoadAndStore(call, key, load, options, out);
    // Another process is loading: poll for its value, backing off.
    const auto now = SteadyClock::now();
    if (now >= deadline) return LoadAndStore(call, key, load, options, out);
    std::this_thread::sleep_for(std::min<SteadyClock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, kMaxPollPause);
    (void)ReadCached(call, key, options, &cached);
    if (cached.state != Cached::State::kAbsent) return cached.TakeInto(out);
  }
}

Status Cache::LoadOnceInProcess(ComputeCall& call, std::string_view key, const ItemLoader& load,
                                const ComputeOptions& options, Item* out) {
  const std::string owned_key(key);
  std::optional<Item> shared;
  if (state_->loads.Begin(owned_key, SteadyClock::now() + InProcessWait(options), &shared)) {
    LoadCoordinator::Claim claim(&state_->loads, owned_key);
    const Status loaded = LoadAndStore(call, key, load, options, out);
    if (loaded.ok()) claim.Publish(*out);
    return loaded;
  }
  if (shared) {
    *out = std::move(*shared);
    return Status::OK();
  }
  // The holder's load failed, or outlasted the wait: this caller loads.
  return LoadAndStore(call, key, load, options, out);
}

Status Cache::GetOrComputeNative(ComputeCall& call, std::string_view key, const ItemLoader& load,
                                 const ComputeOptions& options, Item* out) {
  const PrefixedKey full_key(options_.key_namespace, key);
  const std::string owner = NewLeaseOwner();
  LeaseRequest request;
  request.lease = Ttl{options.lease};
  request.owner = owner;
  // A value in its stale window (the store keeps it stale + 1 s past its
  // expiry) is won for a refresh by one caller; without a stale window, a record
  // in that last second is won like a missing key.
  if (options.stale.count() > 0) {
    request.recache_below = SaturatingAdd(options.stale, kRecordSlack);
  } else if (NeedsRecord(options)) {
    request.recache_below = kRecordSlack;
  }
  const milliseconds wait = options.lease_wait.count() > 0 ? options.lease_wait : options.lease;
  const auto deadline = SteadyClock::now() + wait;
  milliseconds pause{2};
  Cached cached;
  bool asked_refresh = false;  // for a value past this caller's stale window
  // Bounded by `deadline`: every pass returns or sleeps, and the last one loads.
  for (;;) {
    LeaseGrant grant = LeaseGrant::kNone;
    std::uint64_t lease_cas = 0;
    const Status s =
        backend_->LeaseGet(full_key.view(), request, &cached.item, &grant, &lease_cas);
    if (s.IsInvalidArgument()) return s;
    // A key the store cannot lease (Redis: no lock key in its slot): the
    // add-based lease instead, never a load without one.
    if (s.IsUnsupported()) return LoadMissing(call, key, load, options, out);
    const Cached::State state = s.ok() ? cached.Decode(options) : Cached::State::kAbsent;
    if (state == Cached::State::kAbsent) call.NoteMiss(s);
    if (grant == LeaseGrant::kWon) {
      // This caller loads: for a missing key, or to refresh the value it read.
      const bool refresh = state != Cached::State::kAbsent;
      NativeLease held(backend_.get(), full_key.view(), LeaseTicket{owner, lease_cas},
                       refresh ? LeaseEnd::kAbandonRefresh : LeaseEnd::kAbandonMiss);
      Item fresh;
      Status stored;
      Status loaded = LoadAndStore(call, key, load, options, &fresh, &stored);
      // Kept only when the store took the value (or the cached miss): a failed
      // write (too large, say) gives the lease up, so nobody waits on it.
      held.end = LeaseEndAfter(loaded, stored, held.end);
      if (loaded.ok()) {
        *out = std::move(fresh);
        return loaded;
      }
      // A failed refresh still serves the value read (and the next caller
      // wins); a failed load is the caller's answer.
      if (refresh && !loaded.IsNotFound()) return cached.TakeInto(out);
      return loaded;
    }
    if (state == Cached::State::kFresh) {
      if (options.early_refresh > 0 && cached.has_record && !cached.negative &&
          cached.record.fresh_until_ms != 0 &&
          EarlyRefreshDue(NowMs(), cached.record, options.early_refresh)) {
        (void)RefreshNative(call, key, full_key.view(), load, options, &cached);
      }
      return cached.TakeInto(out);
    }
    if (state == Cached::State::kStale) {
      // Another caller refreshes it: the old value at once. Not stale yet to a
      // store whose clock ticks in seconds: ask for its lease outright.
      if (grant == LeaseGrant::kNone) {
        (void)RefreshNative(call, key, full_key.view(), load, options, &cached);
      }
      return cached.TakeInto(out);
    }
    // Held, but past this caller's stale window (a writer's window was longer):
    // never served. One caller takes the lease and refreshes it; the others
    // wait for its value below. Asked once per call: a later ask could win the
    // lease on the value just refreshed, which nothing would then give back.
    if (s.ok() && cached.has_record && !cached.negative && grant == LeaseGrant::kNone &&
        !asked_refresh) {
      asked_refresh = true;
      if (auto refreshed = RefreshNative(call, key, full_key.view(), load, options, &cached)) {
        if (!refreshed->ok()) return *refreshed;
        return cached.TakeInto(out);
      }
    }
    // A store that fails or cannot lease this key does not stop the load;
    // this process's threads still load it once.
    if (grant == LeaseGrant::kNone && !s.ok() && !s.IsNotFound()) {
      return LoadOnceInProcess(call, key, load, options, out);
    }
    // Another caller loads it: poll for its value, backing off.
    const auto now = SteadyClock::now();
    if (now >= deadline) return LoadAndStore(call, key, load, options, out);
    std::this_thread::sleep_for(std::min<SteadyClock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, kMaxPollPause);
  }
}

std::optional<Status> Cache::RefreshNative(ComputeCall& call, std::string_view key,
                                           std::string_view full_key, const ItemLoader& load,
                                           const ComputeOptions& options, Cached* cached) {
  const std::string owner = NewLeaseOwner();
  LeaseRequest request;
  request.lease = Ttl{options.lease};
  request.recache_below = Ttl::max();  // win a fresh value too, if nobody holds its lease
  request.owner = owner;
  Cached now;
  LeaseGrant grant = LeaseGrant::kNone;
  std::uint64_t lease_cas = 0;
  const Status s = backend_->LeaseGet(full_key, request, &now.item, &grant, &lease_cas);
  if (grant != LeaseGrant::kWon) return std::nullopt;  // another caller refreshes it
  NativeLease held(backend_.get(), full_key, LeaseTicket{owner, lease_cas},
                   LeaseEnd::kAbandonRefresh);
  if (s.ok() && now.Decode(options) != Cached::State::kAbsent &&
      (!now.has_record || now.record.fresh_until_ms != cached->record.fresh_until_ms)) {
    // Refreshed by another caller between the two reads: its value is served,
    // and the lease this call won on that value is given back (kAbandonRefresh,
    // the end already set): a win kept on it would leave nobody to refresh it
    // when it goes stale. The price is one early reload by the next caller.
    *cached = std::move(now);
    return Status::OK();
  }
  Item fresh;
  Status stored;
  Status loaded = LoadAndStore(call, key, load, options, &fresh, &stored);
  held.end = LeaseEndAfter(loaded, stored, held.end);
  if (loaded.ok()) {
    cached->item = std::move(fresh);
    cached->negative = false;
  } else if (loaded.IsNotFound()) {
    cached->negative = true;  // the loader says it is gone now: never the old value
  }
  // Any other failure keeps the value read; the lease is given back for the next caller.
  return loaded;
}

}  // namespace cachet
