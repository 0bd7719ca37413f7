// Cache::GetItemsInto and Cache::GetMultiInto: batch reads into the caller's buffers.
//
// GetMulti returns new strings on every call, which the caller then frees: for
// large values that is the dearest part of the call (the allocator hands the
// freed memory back to the kernel and the next call faults it in again). These
// reads lend each of the caller's strings to its Operation while the store runs
// the batch, so a store that assigns the value (rather than replacing the
// string) writes into capacity the caller already owns, and take it back after.
//
// The Operations live in a plan kept per thread and reused from call to call, so
// a warm loop allocates nothing at all (a call nested in another on the same
// thread, from inside a store, plans on its own). Between calls every kept Operation's
// result is empty: the store writes into the caller's buffer, never the plan's.
//
// Both count in metrics() as get_multi, like GetMulti.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "batch_plan.h"
#include "cache_metrics.h"
#include "cachet/cache.h"
#include "computed_record.h"

namespace cachet {

namespace {

// The plan a thread keeps from call to call, and whether a call is using it.
struct KeptPlan {
  BatchPlan plan;
  bool in_use = false;
};

// Not inlined on purpose: inlined, the compiler recomputes a thread_local's
// address (a __tls_get_addr call in a shared library) at every use in the loops.
[[gnu::noinline]] KeptPlan& ThisThreadPlan() {
  thread_local KeptPlan kept;
  return kept;
}

// The thread's kept plan for one call; a call made while it is in use (by a
// store that reads through a Cache from inside this thread's batch) gets a plan of its own.
class PlanForCall {
 public:
  PlanForCall() : kept_(ThisThreadPlan()) {
    if (kept_.in_use) {
      own_ = std::make_unique<BatchPlan>();
      return;
    }
    kept_.in_use = true;
  }
  ~PlanForCall() {
    if (!own_) kept_.in_use = false;
  }
  PlanForCall(const PlanForCall&) = delete;
  PlanForCall& operator=(const PlanForCall&) = delete;

  BatchPlan& get() noexcept { return own_ ? *own_ : kept_.plan; }

 private:
  KeptPlan& kept_;
  std::unique_ptr<BatchPlan> own_;
};

// Runs one batch read. `reader` says how the caller's outputs meet the
// Operations: Lend(result, slot) before the store runs, Collect(result, slot,
// status) after it (which may turn a hit into an error, for an undecodable
// value), and Clear(slot) for a key that got no Operation.
template <class Reader>
void ReadBatch(Backend& backend, std::string_view prefix, std::span<const std::string_view> keys,
               std::vector<Status>* statuses, Reader& reader, OutcomeTally* tally) {
  statuses->resize(keys.size());
  PlanForCall plan_for_call;
  BatchPlan& plan = plan_for_call.get();
  plan.Plan(prefix, keys, OpKind::kGet, *statuses, tally);
  if (plan.size() != keys.size()) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].empty()) reader.Clear(i);
    }
  }
  for (std::size_t j = 0; j < plan.size(); ++j) reader.Lend(plan.op(j).result, plan.slot(j));
  backend.Execute(plan.operations());
  plan.CollectStatuses(*statuses, nullptr);
  // Counted after decoding, as GetMulti counts: a value that does not decode is an error.
  for (std::size_t j = 0; j < plan.size(); ++j) {
    const std::size_t slot = plan.slot(j);
    reader.Collect(plan.op(j).result, slot, (*statuses)[slot]);
    tally->Count((*statuses)[slot]);
  }
  plan.ReleaseIfLarge();
}

// GetItemsInto: the caller's Items are swapped in whole and handed back as the
// store left them. The plan's own (empty) Item waits in the caller's slot meanwhile.
struct ItemReader {
  Item* items;

  void Lend(Item& result, std::size_t slot) {
    std::swap(result, items[slot]);
    result.flags = 0;
    result.cas = 0;
  }
  void Collect(Item& result, std::size_t slot, Status& status) {
    if (status.ok()) status = OpenComputedRecord(&result);  // as Get and GetMulti read it
    std::swap(result, items[slot]);
    if (!status.ok()) Clear(slot);
  }
  // A miss or an error leaves no stale bytes behind, but keeps the capacity.
  void Clear(std::size_t slot) {
    items[slot].value.clear();
    items[slot].flags = 0;
    items[slot].cas = 0;
  }
};

// GetMultiInto: only the caller's strings are lent. A raw value (flags 0) is
// back in the caller's string by the swap alone; any other is decoded into it.
struct ValueReader {
  std::string* values;
  const Codec* codec;

  void Lend(Item& result, std::size_t slot) {
    result.value.swap(values[slot]);
    result.flags = 0;
    result.cas = 0;
  }
  void Collect(Item& result, std::size_t slot, Status& status) {
    if (status.ok()) status = OpenComputedRecord(&result);  // as Get and GetMulti read it
    std::string& value = values[slot];
    value.swap(result.value);
    if (!status.ok()) {
      value.clear();
      return;
    }
    if (result.flags == 0) return;
    status = codec->Decode(Item{std::move(value), result.flags, result.cas}, &value);
    if (!status.ok()) value.clear();
  }
  void Clear(std::size_t slot) { values[slot].clear(); }
};

}  // namespace

void Cache::GetItemsInto(std::span<const std::string_view> keys, std::vector<Item>* items,
                         std::vector<Status>* statuses) {
  const CallCounter counter(metrics_table(), CacheOp::kGetMulti);
  items->resize(keys.size());
  ItemReader reader{items->data()};
  OutcomeTally tally;
  ReadBatch(*backend_, options_.key_namespace, keys, statuses, reader, &tally);
  counter.Finish(tally);
}

void Cache::GetMultiInto(std::span<const std::string_view> keys,
                         std::vector<std::string>* values, std::vector<Status>* statuses) {
  const CallCounter counter(metrics_table(), CacheOp::kGetMulti);
  values->resize(keys.size());
  ValueReader reader{values->data(), codec_.get()};
  OutcomeTally tally;
  ReadBatch(*backend_, options_.key_namespace, keys, statuses, reader, &tally);
  counter.Finish(tally);
}

}  // namespace cachet
