// Cache::Run: sends a Batch (batch.h) through the store's Execute and counts
// each of its operations in the metrics as its single call.
#include <array>
#include <bit>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cache_metrics.h"
#include "computed_record.h"
#include "near_cache.h"
#include "cachet/batch.h"
#include "cachet/cache.h"

namespace cachet {

namespace {

constexpr std::size_t kOps = static_cast<std::size_t>(CacheOp::kCount);

// The metrics of one run: a Call begun per kind of operation the batch holds,
// before it is sent, and the outcomes of that kind's operations added up, so a
// batch of a hundred increments touches the counters once, not a hundred times.
// Every operation counts as a call; their sampled latency is the batch's.
class BatchCounters {
 public:
  explicit BatchCounters(MetricsTable* table) noexcept : table_(table) {}

  void Begin(CacheOp op) noexcept {
    const auto i = static_cast<std::size_t>(op);
    if (table_ == nullptr || (begun_ & (1u << i)) != 0) return;
    begun_ |= 1u << i;
    kinds_[i].emplace(Kind{table_->Begin(op), OutcomeTally()});
  }
  // REQUIRES: Begin(op) was called.
  void Count(CacheOp op, const Status& status) noexcept {
    if (table_ != nullptr) kinds_[static_cast<std::size_t>(op)]->tally.Count(status);
  }
  // Writes every begun kind's sums into the table.
  void Finish() noexcept {
    for (std::uint32_t left = begun_; left != 0; left &= left - 1) {
      const Kind& kind = *kinds_[static_cast<std::size_t>(std::countr_zero(left))];
      const OutcomeTally& tally = kind.tally;
      table_->Finish(kind.call, tally);  // each operation is a single-key call: calls = keys
    }
  }

 private:
  static_assert(kOps <= 32, "one bit of begun_ per kind of operation");
  struct Kind {
    MetricsTable::Call call;
    OutcomeTally tally;
  };
  MetricsTable* table_;
  std::uint32_t begun_ = 0;
  // Empty until begun: a run of one kind of operation (the usual pipeline)
  // sets up one slot, not all of them.
  std::array<std::optional<Kind>, kOps> kinds_;
};

bool IsJoin(const Operation& op) {
  return op.kind == OpKind::kStore &&
         (op.mode == StoreMode::kAppend || op.mode == StoreMode::kPrepend);
}

// A write that replaces or removes what a later join of its key would find.
bool Replaces(const Operation& op) {
  return (op.kind == OpKind::kStore && !IsJoin(op)) || op.kind == OpKind::kRemove;
}

}  // namespace

void Cache::ExecuteJoinsChecked(std::span<Operation> operations) {
  // Runs in stretches: one ends before a join whose key an earlier operation of
  // it replaces, so that join's check reads what the batch left there.
  std::size_t from = 0;
  for (std::size_t i = 0; i < operations.size(); ++i) {
    if (!IsJoin(operations[i])) continue;
    for (std::size_t j = from; j < i; ++j) {
      if (Replaces(operations[j]) && operations[j].key == operations[i].key) {
        RunStretchChecked(operations.subspan(from, i - from));
        from = i;
        break;
      }
    }
  }
  RunStretchChecked(operations.subspan(from));
}

void Cache::RunStretchChecked(std::span<Operation> operations) {
  std::vector<std::size_t> joins;
  for (std::size_t i = 0; i < operations.size(); ++i) {
    if (IsJoin(operations[i])) joins.push_back(i);
  }
  if (joins.empty()) {
    backend_->Execute(operations);
    return;
  }
  // Their stored values, read in one round (Cache::CheckJoinable's rule).
  std::vector<Operation> reads(joins.size());
  for (std::size_t k = 0; k < joins.size(); ++k) reads[k].key = operations[joins[k]].key;
  BehindNearCache(*backend_).Execute(reads);  // not near copies, as CheckJoinable
  std::vector<bool> refused(operations.size(), false);
  for (std::size_t k = 0; k < joins.size(); ++k) {
    Operation& op = operations[joins[k]];
    Status verdict = Joinable(reads[k].status, reads[k].result, op.mode);
    if (!verdict.ok()) {
      op.status = std::move(verdict);
      refused[joins[k]] = true;
    }
  }
  // The rest run in order, in the stretches between the refused ones.
  std::size_t from = 0;
  for (std::size_t i = 0; i <= operations.size(); ++i) {
    if (i < operations.size() && !refused[i]) continue;
    if (i > from) backend_->Execute(operations.subspan(from, i - from));
    from = i + 1;
  }
}

void Cache::Run(Batch& batch) {
  batch.ran_ = true;
  BatchCounters counters(metrics_table());
  for (const Batch::Entry& entry : batch.entries_) counters.Begin(entry.op);
  if (batch.cache_ != this) {
    // This run only: the batch still runs on its own Cache afterwards. Each
    // operation is refused before the store is asked, and counted so, here.
    const Status refused = Status::InvalidArgument("batch: made for another Cache");
    batch.RefuseRun(refused);
    for (const Batch::Entry& entry : batch.entries_) counters.Count(entry.op, refused);
    counters.Finish();
    return;
  }
  const std::span<Operation> operations = batch.Prepare(*backend_);
  if (!operations.empty()) ExecuteJoinsChecked(operations);
  // A value GetOrCompute stored with its record reads back as the value alone.
  for (Operation& operation : operations) {
    if (operation.kind == OpKind::kGet && operation.status.ok()) {
      operation.status = OpenComputedRecord(&operation.result);
    }
  }
  bool refused_as_large = false;  // by the store (a set refused as added removed its key in turn)
  for (std::uint32_t i = 0; i < batch.entries_.size(); ++i) {
    const Batch::Entry& entry = batch.entries_[i];
    const Status& status = batch.StatusAt(i, batch.generation_, Batch::KindOf(entry.op));
    counters.Count(entry.op, status);
    refused_as_large |= entry.op == CacheOp::kSet && status.IsTooLarge() &&
                        entry.refusal == Batch::kNotSent;
  }
  counters.Finish();
  if (refused_as_large) DropStaleOfBatch(WriteOutcomes(batch));
}

std::vector<Cache::WriteOutcome> Cache::WriteOutcomes(const Batch& batch) {
  std::vector<WriteOutcome> writes;
  writes.reserve(batch.entries_.size());
  for (std::uint32_t i = 0; i < batch.entries_.size(); ++i) {
    const Batch::Entry& entry = batch.entries_[i];
    const Status& status = batch.StatusAt(i, batch.generation_, Batch::KindOf(entry.op));
    const bool sent = entry.slot != Batch::kNotSent;
    if (entry.refusal != Batch::kNotSent) {
      // A set refused as added, whose remove was sent in its place: that decided the key.
      const Status& removal = sent ? batch.operations_[entry.slot].status : status;
      writes.push_back({std::string_view(batch.keys_.data() + entry.key_begin, entry.key_size),
                        false, sent && (removal.ok() || removal.IsNotFound())});
      continue;
    }
    // A set the store refused as too large.
    const bool refused = entry.op == CacheOp::kSet && status.IsTooLarge() && sent;
    // Whether it left the key a value of its own or none (not_stored of a
    // replace, not_found of a cas or remove: the key was absent).
    bool decided = false;
    switch (entry.op) {
      case CacheOp::kSet:
      case CacheOp::kAdd: decided = status.ok(); break;
      case CacheOp::kReplace: decided = status.ok() || status.IsNotStored(); break;
      case CacheOp::kCas:
      case CacheOp::kRemove: decided = status.ok() || status.IsNotFound(); break;
      default: break;  // reads, joins, counters and touches keep the value they find
    }
    writes.push_back({std::string_view(batch.keys_.data() + entry.key_begin, entry.key_size),
                      refused, decided});
  }
  return writes;
}

}  // namespace cachet
