// NearCache: reads answered in process, writes and invalidations kept coherent
// (near_cache.h says how races are settled; docs/near-cache.md what each write
// does to the entry).
#include "near_cache.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>

#include "cachet/net/server_pool.h"
#include "computed_record.h"

namespace cachet {

namespace {

constexpr char kValueTag = 'v';
constexpr char kMissTag = 'm';

std::uint64_t UnixNowMs() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count());
}

// The shorter of two TTLs where 0 means "none".
Ttl ShorterTtl(Ttl a, Ttl b) {
  if (a.count() == 0) return b;
  if (b.count() == 0) return a;
  return std::min(a, b);
}

std::uint64_t StatNumber(const StatsMap& stats, std::string_view name) {
  for (const auto& [key, value] : stats) {
    if (key == name) return std::strtoull(value.c_str(), nullptr, 10);
  }
  return 0;
}

// Whether a write leaves exactly its bytes in the store when it succeeds.
bool WritesThrough(StoreMode mode) {
  return mode == StoreMode::kSet || mode == StoreMode::kAdd || mode == StoreMode::kReplace ||
         mode == StoreMode::kCas;
}

}  // namespace

NearCache::NearCache(std::shared_ptr<Backend> store, std::shared_ptr<Backend> near, Ttl ttl,
                     bool tracking)
    : store_(std::move(store)),
      near_(std::move(near)),
      ttl_(ttl),
      tracking_(tracking),
      stripes_(std::make_unique<std::array<Stripe, kStripes>>()),
      stream_faults_seen_(net::StreamFaults()) {}

NearCache::~NearCache() {
  subscription_.reset();  // no callback runs past this line
}

Status NearCache::Subscribe(std::span<const std::string> prefixes) {
  prefixes_.assign(prefixes.begin(), prefixes.end());
  return store_->SubscribeInvalidations(prefixes, this, &subscription_);
}

bool NearCache::Kept(std::string_view key) const noexcept {
  if (!tracking_ || prefixes_.empty()) return true;
  return std::any_of(prefixes_.begin(), prefixes_.end(),
                     [&](const std::string& prefix) { return key.starts_with(prefix); });
}

NearCache::Stripe& NearCache::StripeOf(std::string_view key) noexcept {
  return (*stripes_)[std::hash<std::string_view>{}(key) % kStripes];
}

NearCache::Ticket NearCache::Note(std::string_view key) noexcept {
  Ticket ticket;
  ticket.stripe = &StripeOf(key);
  ticket.generation = generation_.load(std::memory_order_acquire);
  ticket.epoch = ticket.stripe->epoch.load(std::memory_order_acquire);
  ticket.serving = Serving();
  ticket.began = std::chrono::steady_clock::now();
  return ticket;
}

bool NearCache::Lookup(std::string_view key, Item* out, Status* status) {
  if (!Serving()) {
    CountMisses(1);
    return false;
  }
  // A connection closed for bytes it could not account for may have handed an
  // earlier read another request's answer: nothing kept before that is served.
  if (net::StreamFaults() != stream_faults_seen_.load(std::memory_order_acquire)) [[unlikely]]
    DropAfterStreamFault();
  if (!near_->Get(key, out).ok() || out->value.empty()) {
    CountMisses(1);
    return false;
  }
  CountHit();
  out->cas = 0;  // the near store's token means nothing to the store
  if (out->value.front() == kMissTag) {
    out->value.clear();
    *status = Status::NotFound();
  } else {
    out->value.erase(0, 1);
    *status = Status::OK();
  }
  return true;
}

Ttl NearCache::EntryTtl(std::string_view value, Ttl write_ttl, const Ticket& ticket) const {
  // A store whose clock ticks in seconds may drop the item up to a second early.
  if (write_ttl.count() > 0 && store_->capabilities().has(Capability::kSecondTtl)) {
    if (write_ttl <= Ttl{1000}) return Ttl{-1};
    write_ttl -= Ttl{1000};
  }
  Ttl ttl = ShorterTtl(ttl_, write_ttl);
  // GetOrCompute's record goes stale at its own time: the Cache must see it
  // then, from the store, to refresh it or wait for the lease holder.
  ComputedRecord record;
  std::string_view inner;
  if (value.starts_with(kComputedMagic) && DecodeComputedRecord(value, &record, &inner) &&
      record.fresh_until_ms != 0) {
    const std::uint64_t now = UnixNowMs();
    if (record.fresh_until_ms <= now) return Ttl{-1};
    ttl = ShorterTtl(ttl, Ttl{static_cast<Ttl::rep>(record.fresh_until_ms - now)});
  }
  if (ttl.count() == 0) return ttl;  // until invalidated
  const auto spent =
      std::chrono::duration_cast<Ttl>(std::chrono::steady_clock::now() - ticket.began);
  return ttl > spent ? ttl - spent : Ttl{-1};
}

void NearCache::PutLocked(std::string_view key, char tag, std::string_view value,
                          std::uint32_t flags, Ttl ttl) {
  thread_local std::string tagged;
  tagged.assign(1, tag);
  tagged.append(value);
  // A value the near store refuses (too large, a key too long) is simply not
  // kept: the entry must not stay behind with an older value.
  if (!near_->Store(StoreMode::kSet, key, ItemView(tagged, flags), WriteOptions{ttl}).ok()) {
    (void)near_->Remove(key);
  }
}

void NearCache::AfterRead(std::string_view key, const Ticket& ticket, const Status& status,
                          const Item& item, Ttl store_ttl) {
  if (!ticket.serving || !Kept(key)) return;
  const bool miss = status.IsNotFound();
  if (!status.ok() && !(miss && tracking_)) return;
  const Ttl ttl = miss ? EntryTtl({}, Ttl{0}, ticket) : EntryTtl(item.value, store_ttl, ticket);
  const std::lock_guard lock(ticket.stripe->mutex);
  if (ttl.count() < 0) {
    // Not to be kept: nor may an older entry outlive what the store now holds
    // (GetAndTouch may have shortened its TTL).
    (void)near_->Remove(key);
    return;
  }
  if (ticket.stripe->epoch.load(std::memory_order_relaxed) != ticket.epoch ||
      generation_.load(std::memory_order_relaxed) != ticket.generation || !Serving()) {
    return;  // the key changed while it was read: what was read may be old
  }
  const char tag = miss ? kMissTag : kValueTag;
  const std::string_view value = miss ? std::string_view() : std::string_view(item.value);
  const std::uint32_t flags = miss ? 0 : item.flags;
  // Another read kept a different answer since this one began: the key changed
  // and its invalidation has not come (or, without tracking, never will), and
  // which answer is the newer cannot be told. Neither stays, and no read begun
  // before this may keep its answer: a caller that saw the newer value must
  // never be served the older one.
  if (Item kept; near_->Get(key, &kept).ok() && !SameEntry(kept, tag, value, flags)) {
    ticket.stripe->epoch.fetch_add(1, std::memory_order_acq_rel);
    (void)near_->Remove(key);
    return;
  }
  PutLocked(key, tag, value, flags, ttl);
}

bool NearCache::SameEntry(const Item& kept, char tag, std::string_view value,
                          std::uint32_t flags) {
  const std::string_view bytes = kept.value;
  return kept.flags == flags && !bytes.empty() && bytes.front() == tag &&
         bytes.substr(1) == value;
}

void NearCache::AfterWrite(std::string_view key, const Ticket& ticket, const ItemView* written,
                           Ttl write_ttl) {
  if (InForkedChild()) return;  // it serves nothing near, so there is nothing to drop
  const std::lock_guard lock(ticket.stripe->mutex);
  const std::uint64_t before = ticket.stripe->epoch.fetch_add(1, std::memory_order_acq_rel);
  // Written through only if nothing else touched the key's stripe meanwhile:
  // another write may have reached the store after this one and its entry.
  const bool through =
      written != nullptr && ticket.serving && Kept(key) && before == ticket.epoch &&
      generation_.load(std::memory_order_relaxed) == ticket.generation && Serving();
  const Ttl ttl = through ? EntryTtl(written->value, write_ttl, ticket) : Ttl{-1};
  if (ttl.count() >= 0) {
    PutLocked(key, kValueTag, written->value, written->flags, ttl);
  } else {
    (void)near_->Remove(key);
  }
}

void NearCache::Drop(std::string_view key) {
  if (InForkedChild()) return;
  Stripe& stripe = StripeOf(key);
  const std::lock_guard lock(stripe.mutex);
  stripe.epoch.fetch_add(1, std::memory_order_acq_rel);
  (void)near_->Remove(key);
}

void NearCache::DropAfterStreamFault() {
  // Readers that see the fault wait here until the entries are gone; the count
  // seen is published only after, so no reader skips the drop while it runs.
  const std::lock_guard lock(stream_fault_mutex_);
  const std::uint64_t faults = net::StreamFaults();
  if (faults == stream_faults_seen_.load(std::memory_order_relaxed)) return;  // done by another
  DropAll(&dropped_by_stream_fault_);
  stream_faults_seen_.store(faults, std::memory_order_release);
}

void NearCache::DropAll(std::atomic<std::uint64_t>* dropped) {
  if (InForkedChild()) return;
  // From here on a fill or write-through noted before refuses (each checks the
  // generation under its stripe's lock); passing through every stripe's lock, one
  // at a time, waits out any that checked before, so the flush below takes out
  // what it put in.
  generation_.fetch_add(1, std::memory_order_acq_rel);
  for (Stripe& stripe : *stripes_) {
    const std::lock_guard pass(stripe.mutex);
  }
  if (dropped != nullptr) dropped->fetch_add(EntryCount(), std::memory_order_relaxed);
  (void)near_->Flush();
}

std::uint64_t NearCache::EntryCount() const {
  StatsMap stats;
  return near_->Stats(&stats).ok() ? StatNumber(stats, "curr_items") : 0;
}

// ---- reads ------------------------------------------------------------------

Status NearCache::Get(std::string_view key, Item* out) {
  Status status;
  if (Lookup(key, out, &status)) return status;
  const Ticket ticket = Note(key);
  status = store_->Get(key, out);
  AfterRead(key, ticket, status, *out);
  return status;
}

// The CAS token is the store's: always asked of the store, and the value kept.
Status NearCache::Gets(std::string_view key, Item* out) {
  CountMisses(1);  // a read that goes to the store
  const Ticket ticket = Note(key);
  Status status = store_->Gets(key, out);
  AfterRead(key, ticket, status, *out);
  return status;
}

Status NearCache::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  CountMisses(1);  // a read that goes to the store
  const Ticket ticket = Note(key);
  Status status = store_->GetAndTouch(key, ttl, out);
  // Kept no longer than the store now keeps it: min(ttl_ms, the new TTL).
  AfterRead(key, ticket, status, *out, ttl);
  return status;
}

// ---- writes -----------------------------------------------------------------

Status NearCache::Store(StoreMode mode, std::string_view key, ItemView item,
                        const WriteOptions& options) {
  const Ticket ticket = Note(key);
  Status status = store_->Store(mode, key, item, options);
  // noreply: the outcome is unknown, so the entry goes.
  const bool through = status.ok() && !options.noreply && WritesThrough(mode);
  AfterWrite(key, ticket, through ? &item : nullptr, options.ttl);
  return status;
}

Status NearCache::Remove(std::string_view key) {
  const Ticket ticket = Note(key);
  Status status = store_->Remove(key);
  AfterWrite(key, ticket, nullptr, Ttl{0});
  return status;
}

Status NearCache::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  const Ticket ticket = Note(key);
  Status status = store_->Incr(key, delta, value);
  AfterWrite(key, ticket, nullptr, Ttl{0});
  return status;
}

Status NearCache::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  const Ticket ticket = Note(key);
  Status status = store_->Decr(key, delta, value);
  AfterWrite(key, ticket, nullptr, Ttl{0});
  return status;
}

Status NearCache::Touch(std::string_view key, Ttl ttl) {
  const Ticket ticket = Note(key);
  Status status = store_->Touch(key, ttl);
  AfterWrite(key, ticket, nullptr, Ttl{0});
  return status;
}

Status NearCache::Flush() {
  Status status = store_->Flush();
  DropAll();
  return status;
}

// A store's own command may change anything: every entry goes.
Status NearCache::Extension(std::string_view command, std::span<const std::string> args,
                            std::vector<std::string>* reply) {
  Status status = store_->Extension(command, args, reply);
  DropAll();
  return status;
}

// GetOrCompute's leases are the store's business: never answered near.
Status NearCache::LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                           LeaseGrant* grant, std::uint64_t* lease_cas) {
  return store_->LeaseGet(key, request, out, grant, lease_cas);
}

Status NearCache::EndLease(std::string_view key, const LeaseTicket& lease, LeaseEnd end) {
  const Ticket ticket = Note(key);
  Status status = store_->EndLease(key, lease, end);
  AfterWrite(key, ticket, nullptr, Ttl{0});
  return status;
}

Status NearCache::Health(std::vector<ServerHealth>* out) const { return store_->Health(out); }

Status NearCache::SubscribeInvalidations(std::span<const std::string> prefixes,
                                         InvalidationListener* listener,
                                         std::unique_ptr<InvalidationSubscription>* subscription) {
  return store_->SubscribeInvalidations(prefixes, listener, subscription);
}

// ---- batches ----------------------------------------------------------------

void NearCache::Execute(std::span<Operation> batch) {
  // Reads alone may be answered near; a batch that also writes goes to the
  // store whole, so a read after a write of the same key sees that write.
  const bool reads_only = std::all_of(batch.begin(), batch.end(), [](const Operation& op) {
    return op.kind == OpKind::kGet && !op.want_cas;
  });
  std::vector<Operation> rest;
  std::vector<std::size_t> rest_at;
  if (!reads_only) {
    // Its reads go to the store, each counted so (Lookup counts those of reads alone).
    const auto reads = std::count_if(batch.begin(), batch.end(),
                                     [](const Operation& op) { return op.kind == OpKind::kGet; });
    CountMisses(static_cast<std::uint64_t>(reads));
  } else {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (Lookup(batch[i].key, &batch[i].result, &batch[i].status)) continue;
      rest_at.push_back(i);
    }
    if (rest_at.empty()) return;
    if (rest_at.size() < batch.size()) {
      rest.reserve(rest_at.size());
      for (const std::size_t i : rest_at) rest.push_back(std::move(batch[i]));
    }
  }
  // The store's share: the whole batch, or the reads not answered near.
  const std::span<Operation> sent = rest.empty() ? batch : std::span<Operation>(rest);
  std::vector<Ticket> tickets;
  tickets.reserve(sent.size());
  for (const Operation& op : sent) tickets.push_back(Note(op.key));
  store_->Execute(sent);
  for (std::size_t j = 0; j < sent.size(); ++j) {
    const Operation& op = sent[j];
    if (op.kind == OpKind::kGet) {
      AfterRead(op.key, tickets[j], op.status, op.result);
    } else {
      const bool through =
          op.kind == OpKind::kStore && op.status.ok() && !op.noreply && WritesThrough(op.mode);
      AfterWrite(op.key, tickets[j], through ? &op.item : nullptr, op.ttl);
    }
  }
  for (std::size_t j = 0; j < rest.size(); ++j) batch[rest_at[j]] = std::move(rest[j]);
}

// ---- metrics ----------------------------------------------------------------

NearMetrics NearCache::metrics() const {
  NearMetrics m;
  m.enabled = true;
  m.tracking = tracking_;
  m.live = Serving();
  for (const ReadCounts& counts : read_counts_) {
    m.hits += counts.hits.load(std::memory_order_relaxed);
    m.misses += counts.misses.load(std::memory_order_relaxed);
  }
  m.invalidations = invalidations_.load(std::memory_order_acquire);
  m.dropped_by_lost_link = dropped_by_lost_link_.load(std::memory_order_relaxed);
  m.dropped_by_stream_fault = dropped_by_stream_fault_.load(std::memory_order_relaxed);
  StatsMap stats;
  // A forked child has no entries it would serve, and must not take the near store's locks.
  if (!InForkedChild() && near_->Stats(&stats).ok()) {
    m.entries = StatNumber(stats, "curr_items");
    m.bytes = StatNumber(stats, "bytes");
  }
  return m;
}

Status NearCache::Stats(StatsMap* out) {
  // The near cache's lines follow what the servers said, even when one did not.
  Status status = store_->Stats(out);
  const NearMetrics m = metrics();
  out->emplace_back("near_hits", std::to_string(m.hits));
  out->emplace_back("near_misses", std::to_string(m.misses));
  out->emplace_back("near_invalidations", std::to_string(m.invalidations));
  out->emplace_back("near_dropped_by_lost_link", std::to_string(m.dropped_by_lost_link));
  out->emplace_back("near_dropped_by_stream_fault", std::to_string(m.dropped_by_stream_fault));
  out->emplace_back("near_entries", std::to_string(m.entries));
  out->emplace_back("near_bytes", std::to_string(m.bytes));
  out->emplace_back("near_invalidation",
                    m.tracking ? (m.live ? "tracking" : "tracking (down)") : "ttl");
  return status;
}

// ---- the store's invalidations ----------------------------------------------

void NearCache::OnInvalidate(std::span<const std::string_view> keys) noexcept {
  for (const std::string_view key : keys) Drop(key);
  // Counted once applied: whoever sees the count sees the entries gone.
  invalidations_.fetch_add(keys.size(), std::memory_order_release);
}

void NearCache::OnInvalidateAll() noexcept {
  DropAll();
  invalidations_.fetch_add(1, std::memory_order_release);
}

void NearCache::OnTrackingLive(bool live) noexcept {
  if (live) {
    live_.store(true, std::memory_order_release);
    return;
  }
  // Reads stop being answered near at once; then every entry goes.
  live_.store(false, std::memory_order_release);
  DropAll(&dropped_by_lost_link_);
}

// ---- entry points -----------------------------------------------------------

Result<std::shared_ptr<Backend>> WithNearCache(std::shared_ptr<Backend> store,
                                               std::shared_ptr<Backend> near,
                                               NearCacheOptions options) {
  if (store == nullptr || near == nullptr) {
    return Status::InvalidArgument("near cache: a store and a near store are needed");
  }
  if (options.ttl.count() < 0) {
    return Status::InvalidArgument("near cache: ttl must not be negative");
  }
  const bool offered = store->capabilities().has(Capability::kInvalidations);
  if (options.invalidation == NearInvalidation::kTracking && !offered) {
    return Status::ConfigError("[near_cache] invalidation = tracking: the " +
                               std::string(store->name()) +
                               " store does not offer invalidations (use auto or ttl)");
  }
  const bool tracking = offered && options.invalidation != NearInvalidation::kTtl;
  if (!tracking && options.ttl.count() == 0) {
    return Status::ConfigError(
        "[near_cache] ttl_ms = 0 means 'until invalidated', which needs tracking, and the " +
        std::string(store->name()) + " store is used with ttl invalidation");
  }
  auto near_cache =
      std::make_shared<NearCache>(std::move(store), std::move(near), options.ttl, tracking);
  if (tracking) {
    if (Status s = near_cache->Subscribe(options.prefixes); !s.ok()) return s;
  }
  return std::shared_ptr<Backend>(std::move(near_cache));
}

Backend& BehindNearCache(Backend& backend) noexcept {
  auto* near_cache = dynamic_cast<NearCache*>(&backend);
  return near_cache != nullptr ? near_cache->store() : backend;
}

NearMetrics NearCacheMetrics(const Backend& backend) {
  const auto* near_cache = dynamic_cast<const NearCache*>(&backend);
  return near_cache != nullptr ? near_cache->metrics() : NearMetrics{};
}

}  // namespace cachet
