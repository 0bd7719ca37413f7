// Cache::Run: sends a Batch (batch.h) through the store's Execute and counts
// each of its operations in the metrics as its single call.
#include <array>
#include <cstddef>
#include <span>

#include "cache_metrics.h"
#include "cachet/batch.h"
#include "cachet/cache.h"

namespace cachet {

namespace {

constexpr std::size_t kOps = static_cast<std::size_t>(CacheOp::kCount);

// The metrics of one run: one Call begun per kind of operation the batch holds,
// before it is sent, so that the sampled latency of each is the batch's.
class BatchCounters {
 public:
  explicit BatchCounters(MetricsTable* table) noexcept : table_(table) {}

  void Begin(CacheOp op) noexcept {
    const auto i = static_cast<std::size_t>(op);
    if (table_ == nullptr || begun_[i]) return;
    calls_[i] = table_->Begin(op);
    begun_[i] = true;
  }
  void Finish(CacheOp op, const Status& status) const noexcept {
    if (table_ != nullptr) table_->Finish(calls_[static_cast<std::size_t>(op)], status);
  }

 private:
  MetricsTable* table_;
  std::array<MetricsTable::Call, kOps> calls_{};
  std::array<bool, kOps> begun_{};
};

}  // namespace

void Cache::Run(Batch& batch) {
  batch.ran_ = true;
  if (batch.cache_ != this) {
    for (Batch::Entry& entry : batch.entries_) {
      entry.sent = Batch::kNotSent;
      entry.refused = Status::InvalidArgument("batch: made for another Cache");
    }
    return;
  }
  BatchCounters counters(metrics_table());
  for (const Batch::Entry& entry : batch.entries_) counters.Begin(entry.op);
  const std::span<Operation> operations = batch.Prepare(*backend_);
  if (!operations.empty()) backend_->Execute(operations);
  for (const Batch::Entry& entry : batch.entries_) {
    if (entry.sent == Batch::kNotSent) {
      counters.Finish(entry.op, entry.refused);
      continue;
    }
    Operation& operation = operations[entry.sent];
    // A batched read leaves the CAS token out on a store that computes it only on
    // request (Redis): a gets that hit without one reads it on its own.
    if (entry.op == CacheOp::kGets && operation.status.ok() && operation.result.cas == 0 &&
        backend_->capabilities().has(Capability::kCas)) {
      operation.status = backend_->Gets(operation.key, &operation.result);
    }
    counters.Finish(entry.op, operation.status);
  }
}

}  // namespace cachet
