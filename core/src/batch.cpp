// Batch: see batch.h. Cache::Run, which sends a batch, is in cache_run.cpp.
#include "cachet/batch.h"

#include <atomic>
#include <string>
#include <utility>

#include "computed_record.h"

namespace cachet {

namespace {

bool IsWrite(CacheOp op) noexcept { return op != CacheOp::kGet && op != CacheOp::kGets; }

// Keys and values are placed by offset in 32-bit fields; a batch over 4 GiB of
// keys or values is refused operation by operation instead of wrapping.
constexpr std::size_t kMaxBuffer = 0xFFFFFFFFu;

// A generation no batch of this process has had lately, never 0 (a default
// handle's). One atomic add per Clear(): no allocation, no lock.
std::uint32_t NewGeneration() noexcept {
  static std::atomic<std::uint32_t> next{1};
  std::uint32_t generation = next.fetch_add(1, std::memory_order_relaxed);
  if (generation == 0) generation = next.fetch_add(1, std::memory_order_relaxed);
  return generation;
}

}  // namespace

Batch::Batch(Cache& cache) : cache_(&cache), generation_(NewGeneration()) {}

Batch::~Batch() = default;

void Batch::Clear() noexcept {
  entries_.clear();
  refusals_.clear();
  run_refusals_.clear();
  owner_.clear();
  used_ = 0;
  sent_ = 0;
  keys_.clear();
  values_.clear();
  generation_ = NewGeneration();
  ran_ = false;
}

std::uint32_t Batch::Refuse(CacheOp op, Status status, std::string_view key) {
  ran_ = false;
  const std::string_view prefix = cache_->options().key_namespace;
  const auto key_begin = static_cast<std::uint32_t>(keys_.size());
  std::uint32_t key_size = 0;
  if (!key.empty() && keys_.size() + prefix.size() + key.size() <= kMaxBuffer) {
    keys_.append(prefix);
    keys_.append(key);
    key_size = static_cast<std::uint32_t>(prefix.size() + key.size());
  }
  entries_.push_back(Entry{op, false, kNotSent, static_cast<std::uint32_t>(refusals_.size()),
                           kNotSent, key_begin, key_size, 0, 0});
  refusals_.push_back(std::move(status));
  return static_cast<std::uint32_t>(entries_.size() - 1);
}

std::uint32_t Batch::RefuseSetAsLarge(CacheOp op, Status status, std::string_view key) {
  if (key.empty()) return Refuse(op, std::move(status));
  Operation* removal = nullptr;
  const std::uint32_t index = AddEntry(op, key, &removal);
  if (removal == nullptr) return index;  // its key refused (AddEntry): nothing to remove
  removal->kind = OpKind::kRemove;
  entries_[index].refusal = static_cast<std::uint32_t>(refusals_.size());
  refusals_.push_back(std::move(status));
  return index;
}

std::uint32_t Batch::AddEntry(CacheOp op, std::string_view key, Operation** out) {
  *out = nullptr;
  if (key.empty()) return Refuse(op, Status::InvalidArgument("empty key"));
  const std::string_view prefix = cache_->options().key_namespace;
  if (keys_.size() + prefix.size() + key.size() > kMaxBuffer) {
    return Refuse(op, Status::TooLarge("batch: keys over 4 GiB in one batch"));
  }
  ran_ = false;
  const auto key_begin = static_cast<std::uint32_t>(keys_.size());
  if (!prefix.empty()) keys_.append(prefix);
  keys_.append(key);
  if (operations_.size() <= used_) operations_.resize(used_ + 1);
  Operation& operation = operations_[used_];
  // A reused Operation keeps its result's buffer; everything else starts afresh.
  operation.kind = OpKind::kGet;
  operation.mode = StoreMode::kSet;
  operation.key = {};
  operation.item = ItemView();
  operation.ttl = Ttl{0};
  operation.delta = 0;
  operation.noreply = false;
  operation.want_cas = op == CacheOp::kGets;  // the store fills the token of this read
  if (!operation.status.ok()) operation.status = Status();
  operation.result.value.clear();
  operation.result.flags = 0;
  operation.result.cas = 0;
  operation.counter = 0;
  owner_.push_back(static_cast<std::uint32_t>(entries_.size()));
  entries_.push_back(Entry{op, false, used_++, kNotSent, kNotSent, key_begin,
                           static_cast<std::uint32_t>(prefix.size() + key.size()), 0, 0});
  *out = &operation;
  return static_cast<std::uint32_t>(entries_.size() - 1);
}

std::uint32_t Batch::AddRead(CacheOp op, std::string_view key) {
  Operation* operation = nullptr;
  return AddEntry(op, key, &operation);  // an Operation is a get when reset
}

BatchWrite Batch::AddStore(CacheOp op, StoreMode mode, std::string_view key, ItemView item,
                           std::uint64_t cas, Ttl ttl) {
  if (ttl.count() < 0) return {Refuse(op, NegativeTtlError(cache_->backend().name())), generation_};
  // As Cache's own writes: bytes that would read back as GetOrCompute's record.
  if (mode != StoreMode::kAppend &&
      LooksLikeComputedRecord(item.value, mode == StoreMode::kPrepend)) {
    return {Refuse(op, ComputedRecordRefused()), generation_};
  }
  if (values_.size() + item.value.size() > kMaxBuffer) {
    return {Refuse(op, Status::TooLarge("batch: values over 4 GiB in one batch")), generation_};
  }
  Operation* operation = nullptr;
  const std::uint32_t index = AddEntry(op, key, &operation);
  if (operation == nullptr) return {index, generation_};
  operation->kind = OpKind::kStore;
  operation->mode = mode;
  operation->item.flags = item.flags;
  operation->item.cas = cas;
  operation->ttl = ttl;
  Entry& entry = entries_[index];
  entry.value_begin = static_cast<std::uint32_t>(values_.size());
  entry.value_size = static_cast<std::uint32_t>(item.value.size());
  values_.append(item.value);
  return {index, generation_};
}

// Append and prepend keep the item's expiry, as memcached does: TTL 0, not the default.
BatchWrite Batch::Append(std::string_view key, std::string_view bytes) {
  return AddStore(CacheOp::kAppend, StoreMode::kAppend, key, ItemView(bytes), 0, Ttl{0});
}

BatchWrite Batch::Prepend(std::string_view key, std::string_view bytes) {
  return AddStore(CacheOp::kPrepend, StoreMode::kPrepend, key, ItemView(bytes), 0, Ttl{0});
}

BatchWrite Batch::Remove(std::string_view key) {
  Operation* operation = nullptr;
  const std::uint32_t index = AddEntry(CacheOp::kRemove, key, &operation);
  if (operation != nullptr) operation->kind = OpKind::kRemove;
  return {index, generation_};
}

BatchWrite Batch::Touch(std::string_view key, Ttl ttl) {
  if (ttl.count() < 0) return {Refuse(CacheOp::kTouch, NegativeTtlError(cache_->backend().name())), generation_};
  Operation* operation = nullptr;
  const std::uint32_t index = AddEntry(CacheOp::kTouch, key, &operation);
  if (operation == nullptr) return {index, generation_};
  operation->kind = OpKind::kTouch;
  operation->ttl = ttl;
  return {index, generation_};
}

BatchCounter Batch::Incr(std::string_view key, std::uint64_t delta) {
  Operation* operation = nullptr;
  const std::uint32_t index = AddEntry(CacheOp::kIncr, key, &operation);
  if (operation == nullptr) return {index, generation_};
  operation->kind = OpKind::kIncr;
  operation->delta = delta;
  return {index, generation_};
}

BatchCounter Batch::Decr(std::string_view key, std::uint64_t delta) {
  Operation* operation = nullptr;
  const std::uint32_t index = AddEntry(CacheOp::kDecr, key, &operation);
  if (operation == nullptr) return {index, generation_};
  operation->kind = OpKind::kDecr;
  operation->delta = delta;
  return {index, generation_};
}

// A handle of another fill marks nothing: its operation is not this fill's.
void Batch::Noreply(BatchWrite write) {
  if (write.generation_ == generation_ && write.index_ < entries_.size()) {
    entries_[write.index_].noreply = true;
  }
}

void Batch::Noreply(BatchCounter counter) {
  if (counter.generation_ == generation_ && counter.index_ < entries_.size()) {
    entries_[counter.index_].noreply = true;
  }
}

void Batch::MoveToSlot(std::uint32_t index, std::uint32_t to) noexcept {
  const std::uint32_t from = entries_[index].slot;
  const std::uint32_t other = owner_[to];
  std::swap(operations_[from], operations_[to]);
  entries_[other].slot = from;
  owner_[from] = other;
  entries_[index].slot = to;
  owner_[to] = index;
}

std::span<Operation> Batch::Prepare(const Backend& backend) {
  const bool has_noreply = backend.capabilities().has(Capability::kNoreply);
  run_refusals_.clear();
  // Slots below `next` hold the Operations sent so far, in batch order; an
  // entry's slot is never among them, so it moves down into `next`.
  std::uint32_t next = 0;
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    entry.run_refusal = kNotSent;
    if (entry.slot == kNotSent) continue;  // refused as it was added
    bool noreply = IsWrite(entry.op) && (entry.noreply || noreply_all_);
    // A refused set's remove goes out all the same, answered where noreply is not known.
    if (entry.refusal != kNotSent) noreply = noreply && has_noreply;
    if (noreply && !has_noreply) {
      entry.run_refusal = static_cast<std::uint32_t>(run_refusals_.size());
      run_refusals_.push_back(Status::Unsupported(std::string(backend.name()) +
                                                  " has no noreply: the write was not sent"));
      continue;
    }
    if (entry.slot != next) MoveToSlot(i, next);
    Operation& operation = operations_[next++];
    operation.noreply = noreply;  // as sent: Outcome() reads it, not today's flags
    // Nothing of an earlier run survives into this one.
    if (!operation.status.ok()) operation.status = Status();
    operation.result.value.clear();
    operation.result.flags = 0;
    operation.result.cas = 0;
    operation.counter = 0;
    // The offsets were checked against the buffers as the operation was added.
    operation.key = std::string_view(keys_.data() + entry.key_begin, entry.key_size);
    if (operation.kind == OpKind::kStore) {
      operation.item.value = std::string_view(values_.data() + entry.value_begin, entry.value_size);
    }
  }
  sent_ = next;
  return {operations_.data(), sent_};
}

void Batch::RefuseRun(Status status) {
  run_refusals_.clear();
  run_refusals_.push_back(std::move(status));
  for (Entry& entry : entries_) entry.run_refusal = 0;
  sent_ = 0;
}

namespace {

// The answers for handles that name no outcome, kept for good so a reference
// to one stays valid.
const Status& NotRun() {
  static const Status* const kNotRun = new Status(Status::InvalidArgument("batch not run"));
  return *kNotRun;
}
const Status& OtherFill() {
  static const Status* const kOtherFill = new Status(Status::InvalidArgument(
      "batch: a handle from another fill (made before Clear, by another Batch, or default-made)"));
  return *kOtherFill;
}
const Status& NoSuchOperation() {
  static const Status* const kNoSuch =
      new Status(Status::InvalidArgument("batch: no such operation of the handle's kind"));
  return *kNoSuch;
}

}  // namespace

const Status* Batch::RefusalOf(std::uint32_t index, std::uint32_t generation,
                               HandleKind kind) const {
  if (generation != generation_) return &OtherFill();
  if (index >= entries_.size() || KindOf(entries_[index].op) != kind) return &NoSuchOperation();
  if (!ran_) return &NotRun();
  const Entry& entry = entries_[index];
  if (entry.run_refusal != kNotSent) return &run_refusals_[entry.run_refusal];
  return entry.refusal != kNotSent ? &refusals_[entry.refusal] : nullptr;
}

const Operation* Batch::SentOperation(const BatchHandle& handle, HandleKind kind,
                                      Status* refused) const {
  if (const Status* refusal = RefusalOf(handle.index_, handle.generation_, kind)) {
    *refused = *refusal;
    return nullptr;
  }
  return &operations_[entries_[handle.index_].slot];
}

const Status& Batch::Outcome(BatchWrite write) const {
  return StatusAt(write.index_, write.generation_, HandleKind::kWrite);
}

Result<std::uint64_t> Batch::Outcome(BatchCounter counter) const {
  Status refused;
  const Operation* sent = SentOperation(counter, HandleKind::kCounter, &refused);
  if (sent == nullptr) return refused;
  if (!sent->status.ok()) return sent->status;
  if (sent->noreply) {  // as it was sent, whatever the flags say now
    return Status::InvalidArgument(
        "batch: a noreply counter's new value is not read; see StatusOf");
  }
  return sent->counter;
}

}  // namespace cachet
