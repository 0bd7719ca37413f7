// Batch: mixed cache operations sent together, one round trip per server.
//
// A Batch collects get, gets, set, add, replace, cas, append, prepend, remove,
// incr, decr and touch calls for one Cache; `cache.Run(batch)` sends them all at
// once (stores that pipeline send one request per server, the others run them one
// by one) and each call's outcome is then read with Outcome():
//
//   cachet::Batch batch(cache);
//   auto stored = batch.Set("a", 1);
//   auto count = batch.Incr("a", 5);
//   auto read = batch.Get<std::int64_t>("a");
//   cache.Run(batch);
//   batch.Outcome(stored);  // Status: ok
//   batch.Outcome(count);   // Result<std::uint64_t>: 6
//   batch.Outcome(read);    // Lookup<std::int64_t>: hit, 6
//
// Values are encoded by the Cache's codec as they are added, and the Cache's
// namespace is put in front of every key, exactly as Get<T>, Set and the other
// single calls do; writes without a TTL take the default TTL. Operations on the
// same key run in the order they were added. A server that is down fails its own
// operations only. Each operation counts in the Cache's metrics as its single call
// would (a call; its sampled latency is the whole batch's).
//
// Running a batch again sends all its operations again (writes included), and
// decides again what it refuses at run time (a noreply the store lacks, a Cache
// not its own): after set_noreply(false) a rerun sends the writes it refused.
//
// The Batch owns copies of its keys and values, so the caller's buffers may go
// away once a call returns (and a batch could be handed to an asynchronous run).
// Clear() empties it for reuse: its buffers keep their capacity, so a batch
// refilled with operations of similar sizes allocates nothing once warm.
//
// noreply: a write marked Noreply() (or every write, after set_noreply(true)) is
// sent without waiting for its reply, on stores that declare Capability::kNoreply
// (memcached: text `noreply`, which loses the outcome, so ok only means sent; meta
// quiet mode, which still reports errors; Tokyo Tyrant: a set is `putnr`, and
// its other writes, which have no quiet command, answer unsupported naming
// tokyotyrant and the operation, unsent). On the others (memory, Redis: see
// docs/redis.md) it answers unsupported naming the store and is not sent. A
// noreply counter's new value is not read.
//
// Thread safety: a Batch is used by one thread at a time. It refers to the Cache
// it was made for, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cachet/backend.h"
#include "cachet/cache.h"
#include "cachet/export.h"
#include "cachet/item.h"
#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet {

// Handles to one operation of a Batch, returned when it is added and passed to
// Outcome() after the run. A handle names the batch and the fill it came from:
// once the batch is cleared (or with another Batch) it answers invalid_argument
// ("a handle from another fill"), whatever operation now sits at its place. A
// default-made handle names no operation and answers invalid_argument too.
// Handles are only made by a Batch.
class BatchHandle {
 protected:
  BatchHandle() = default;
  BatchHandle(std::uint32_t index, std::uint32_t generation) noexcept
      : index_(index), generation_(generation) {}

 private:
  friend class Batch;
  std::uint32_t index_ = 0;
  std::uint32_t generation_ = 0;  // never a batch's: Batch generations start at 1
};

template <class T>
class BatchRead : public BatchHandle {  // Get<T>
 public:
  BatchRead() = default;

 private:
  friend class Batch;
  BatchRead(std::uint32_t index, std::uint32_t generation) noexcept
      : BatchHandle(index, generation) {}
};
template <class T>
class BatchVersionedRead : public BatchHandle {  // Gets<T>
 public:
  BatchVersionedRead() = default;

 private:
  friend class Batch;
  BatchVersionedRead(std::uint32_t index, std::uint32_t generation) noexcept
      : BatchHandle(index, generation) {}
};
class BatchWrite : public BatchHandle {  // set, add, replace, cas, append, prepend, remove, touch
 public:
  BatchWrite() = default;

 private:
  friend class Batch;
  BatchWrite(std::uint32_t index, std::uint32_t generation) noexcept
      : BatchHandle(index, generation) {}
};
class BatchCounter : public BatchHandle {  // incr, decr
 public:
  BatchCounter() = default;

 private:
  friend class Batch;
  BatchCounter(std::uint32_t index, std::uint32_t generation) noexcept
      : BatchHandle(index, generation) {}
};

class CACHET_EXPORT Batch {
 public:
  // A batch of operations for `cache`. REQUIRES: `cache` outlives the batch.
  explicit Batch(Cache& cache);
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch();

  template <class T = std::string>
  BatchRead<T> Get(std::string_view key) {
    return {AddRead(CacheOp::kGet, key), generation_};
  }
  template <class T = std::string>
  BatchVersionedRead<T> Gets(std::string_view key) {
    return {AddRead(CacheOp::kGets, key), generation_};
  }

  template <class T>
  BatchWrite Set(std::string_view key, const T& value, std::optional<Ttl> ttl = std::nullopt) {
    return AddTyped(CacheOp::kSet, StoreMode::kSet, key, value, 0, ttl);
  }
  template <class T>
  BatchWrite Add(std::string_view key, const T& value, std::optional<Ttl> ttl = std::nullopt) {
    return AddTyped(CacheOp::kAdd, StoreMode::kAdd, key, value, 0, ttl);
  }
  template <class T>
  BatchWrite Replace(std::string_view key, const T& value, std::optional<Ttl> ttl = std::nullopt) {
    return AddTyped(CacheOp::kReplace, StoreMode::kReplace, key, value, 0, ttl);
  }
  // exists if the item changed since `cas` was read, not_found if it is gone.
  template <class T>
  BatchWrite Cas(std::string_view key, const T& value, std::uint64_t cas,
                 std::optional<Ttl> ttl = std::nullopt) {
    return AddTyped(CacheOp::kCas, StoreMode::kCas, key, value, cas, ttl);
  }
  // Raw bytes, keeping the item's expiry (as Cache::Append and Cache::Prepend).
  BatchWrite Append(std::string_view key, std::string_view bytes);
  BatchWrite Prepend(std::string_view key, std::string_view bytes);
  BatchWrite Remove(std::string_view key);
  BatchWrite Touch(std::string_view key, Ttl ttl);
  BatchCounter Incr(std::string_view key, std::uint64_t delta = 1);
  BatchCounter Decr(std::string_view key, std::uint64_t delta = 1);

  // Sends one write without waiting for its reply (see noreply above).
  void Noreply(BatchWrite write);
  void Noreply(BatchCounter counter);
  // Every write of the batch, added before or after, is sent noreply.
  void set_noreply(bool on) noexcept { noreply_all_ = on; }
  bool noreply() const noexcept { return noreply_all_; }

  // Outcomes, valid after Cache::Run until the next Clear() or add (a reference
  // returned lives as long). Before a run every operation answers
  // invalid_argument ("batch not run").
  template <class T>
  Lookup<T> Outcome(BatchRead<T> read) const;
  template <class T>
  Lookup<Versioned<T>> Outcome(BatchVersionedRead<T> read) const;
  const Status& Outcome(BatchWrite write) const;
  // A counter sent noreply (in the last run, whatever the flags say now) has no
  // value read: its Outcome is invalid_argument once it went well, and
  // StatusOf() tells how it went.
  Result<std::uint64_t> Outcome(BatchCounter counter) const;
  // Any operation's Status alone: ok for a hit or a write that took effect,
  // not_found for a miss, and so on.
  template <class Handle>
  const Status& StatusOf(Handle handle) const {
    return StatusAt(handle.index_, handle.generation_, KindOf(handle));
  }

  // Forgets every operation; buffers keep their capacity. noreply() stays.
  void Clear() noexcept;
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  bool ran() const noexcept { return ran_; }

 private:
  friend class Cache;  // Cache::Run sends the planned operations

  // One operation as added. `slot` is its Operation in operations_; Prepare
  // moves the ones it sends to the front, in batch order. An operation refused as
  // it was added (empty key, bad value) has no slot and its Status in refusals_
  // for good; one refused by a run (a noreply the store lacks, another Cache) has
  // its Status in run_refusals_ until the next run decides again.
  // Plain data, so clearing and refilling the list costs next to nothing.
  struct Entry {
    CacheOp op;
    bool noreply;                           // marked by Noreply()
    std::uint32_t slot;                     // in operations_, or kNotSent
    // In refusals_, or kNotSent. A refused entry has no slot, but for a set
    // refused as too large, whose slot holds the remove sent in its place.
    std::uint32_t refusal;
    std::uint32_t run_refusal;              // in run_refusals_, or kNotSent
    std::uint32_t key_begin, key_size;      // in keys_
    std::uint32_t value_begin, value_size;  // in values_
  };
  static constexpr std::uint32_t kNotSent = ~std::uint32_t{0};

  // The kinds of handle; an operation answers only a handle of its own kind.
  enum class HandleKind : std::uint8_t { kRead, kVersionedRead, kWrite, kCounter };
  template <class T>
  static constexpr HandleKind KindOf(BatchRead<T>) noexcept { return HandleKind::kRead; }
  template <class T>
  static constexpr HandleKind KindOf(BatchVersionedRead<T>) noexcept {
    return HandleKind::kVersionedRead;
  }
  static constexpr HandleKind KindOf(BatchWrite) noexcept { return HandleKind::kWrite; }
  static constexpr HandleKind KindOf(BatchCounter) noexcept { return HandleKind::kCounter; }
  static constexpr HandleKind KindOf(CacheOp op) noexcept {
    switch (op) {
      case CacheOp::kGet: return HandleKind::kRead;
      case CacheOp::kGets: return HandleKind::kVersionedRead;
      case CacheOp::kIncr:
      case CacheOp::kDecr: return HandleKind::kCounter;
      default: return HandleKind::kWrite;
    }
  }

  std::uint32_t AddRead(CacheOp op, std::string_view key);
  BatchWrite AddStore(CacheOp op, StoreMode mode, std::string_view key, ItemView item,
                      std::uint64_t cas, Ttl ttl);
  template <class T>
  BatchWrite AddTyped(CacheOp op, StoreMode mode, std::string_view key, const T& value,
                      std::uint64_t cas, std::optional<Ttl> ttl);
  // The next Operation, reset for reuse, with the namespaced key; kNotSent and
  // a refusal instead when the key is empty.
  std::uint32_t AddEntry(CacheOp op, std::string_view key, Operation** out);
  // An entry refused as added, with `key` (namespaced in keys_) when not empty.
  std::uint32_t Refuse(CacheOp op, Status status, std::string_view key = {});
  // A set refused as too large: its outcome is `status`, and a remove of its key
  // is sent in its place, so the batch's later operations on the key find no
  // value, as they would after the single call (Cache::Set removes it too).
  std::uint32_t RefuseSetAsLarge(CacheOp op, Status status, std::string_view key);
  // Swaps the Operation of entry `index` into slot `to`, and the Operation
  // there into the entry's old slot.
  void MoveToSlot(std::uint32_t index, std::uint32_t to) noexcept;

  // Called by Cache::Run: decides this run's refusals, moves the Operations to
  // send to the front (in order), points them into keys_ and values_ (which may
  // have moved while operations were added), settles noreply and clears every
  // output of the run before.
  std::span<Operation> Prepare(const Backend& backend);
  // Called by Cache::Run instead of Prepare: this run sends nothing and every
  // operation answers `status`.
  void RefuseRun(Status status);
  // Why the operation a handle names has no outcome of its own (a handle of
  // another fill or batch, not run, refused), or nullptr when it was sent.
  // `kind` is the handle's: an operation of another kind answers invalid_argument
  // (a guard should two batches' generations ever meet after 2^32 fills).
  const Status* RefusalOf(std::uint32_t index, std::uint32_t generation, HandleKind kind) const;
  const Operation* SentOperation(const BatchHandle& handle, HandleKind kind,
                                 Status* refused) const;
  // Inline: a loop over a batch's outcomes checks one branch per operation.
  const Status& StatusAt(std::uint32_t index, std::uint32_t generation, HandleKind kind) const {
    if (generation == generation_ && index < entries_.size() && ran_) {
      const Entry& entry = entries_[index];
      if (entry.refusal == kNotSent && entry.run_refusal == kNotSent && KindOf(entry.op) == kind) {
        return operations_[entry.slot].status;
      }
    }
    return *RefusalOf(index, generation, kind);
  }

  Cache* cache_;
  std::vector<Entry> entries_;
  std::vector<Status> refusals_;       // of operations refused as added
  std::vector<Status> run_refusals_;   // of operations the last run refused
  std::vector<Operation> operations_;  // may hold more than `used_` when reused
  std::vector<std::uint32_t> owner_;   // the entry whose Operation is in each slot
  std::uint32_t used_ = 0;             // Operations given to entries
  std::uint32_t sent_ = 0;             // Operations the last Prepare sends
  std::string keys_;                   // namespaced keys, joined
  std::string values_;                 // encoded values, joined
  Item scratch_;                       // encodes non-string values
  // This fill's: every handle carries it, and Clear() takes a new one, unique
  // across the process's batches (until it wraps after 2^32 fills), never 0.
  std::uint32_t generation_;
  bool noreply_all_ = false;
  bool ran_ = false;
};

// ---- template bodies ------------------------------------------------------

template <class T>
BatchWrite Batch::AddTyped(CacheOp op, StoreMode mode, std::string_view key, const T& value,
                           std::uint64_t cas, std::optional<Ttl> ttl) {
  const Ttl effective = ttl ? *ttl : cache_->options().default_ttl;
  Status s;
  ItemView view;
  if constexpr (std::is_same_v<decltype(detail::CodecArg(value)), std::string_view>) {
    s = cache_->codec().EncodeView(detail::CodecArg(value), &view);
  } else {
    s = cache_->codec().Encode(detail::CodecArg(value), &scratch_);
    view = ItemView(scratch_);
  }
  if (!s.ok()) {
    if (mode == StoreMode::kSet && s.IsTooLarge()) {
      return {RefuseSetAsLarge(op, std::move(s), key), generation_};
    }
    return {Refuse(op, std::move(s)), generation_};
  }
  return AddStore(op, mode, key, view, cas, effective);
}

template <class T>
Lookup<T> Batch::Outcome(BatchRead<T> read) const {
  Status refused;
  const Operation* sent = SentOperation(read, HandleKind::kRead, &refused);
  if (sent == nullptr) return Lookup<T>::FromStatus(std::move(refused));
  if (!sent->status.ok()) return Lookup<T>::FromStatus(sent->status);
  T value{};
  Status s = cache_->codec().Decode(sent->result, &value);
  if (!s.ok()) return Lookup<T>::FromStatus(std::move(s));
  return Lookup<T>::Hit(std::move(value));
}

template <class T>
Lookup<Versioned<T>> Batch::Outcome(BatchVersionedRead<T> read) const {
  Status refused;
  const Operation* sent = SentOperation(read, HandleKind::kVersionedRead, &refused);
  if (sent == nullptr) return Lookup<Versioned<T>>::FromStatus(std::move(refused));
  if (!sent->status.ok()) return Lookup<Versioned<T>>::FromStatus(sent->status);
  Versioned<T> v{T{}, sent->result.cas};
  Status s = cache_->codec().Decode(sent->result, &v.value);
  if (!s.ok()) return Lookup<Versioned<T>>::FromStatus(std::move(s));
  return Lookup<Versioned<T>>::Hit(std::move(v));
}

}  // namespace cachet
