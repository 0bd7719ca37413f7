// Cache::GetItemsInto and Cache::GetMultiInto: batch reads into the caller's buffers.
//
// GetMulti returns new strings on every call, which the caller then frees: for
// large values that is the dearest part of the call (the allocator hands the
// freed memory back to the kernel and the next call faults it in again). These
// reads swap each of the caller's strings into its Operation before the store
// runs the batch, so a store that assigns the value (rather than replacing the
// string) writes into capacity the caller already owns, and swap it back after.
//
// The Operations themselves live in a per-thread scratch that is reused from
// call to call, so a warm loop allocates nothing at all.
//
// Both count in metrics() as get_multi, like GetMulti.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/cache.h"
#include "cache_metrics.h"

namespace cachet {

namespace {

// A batch larger than this gives its scratch back after the call, so that one
// huge batch does not pin its memory in the thread for good.
constexpr std::size_t kKeptOperations = 4096;
// A buffer the thread would keep between calls (one a decoded value replaced)
// is only kept up to this size, so big values do not stay pinned in the thread.
constexpr std::size_t kKeptBufferBytes = std::size_t{64} << 10;

// What a batch read needs besides the caller's vectors, kept per thread.
// Between calls every Operation's result is empty: the caller's strings are
// swapped in for a call and out again after it.
struct ReadScratch {
  std::string key_storage;         // the namespaced keys, joined
  std::vector<Operation> batch;    // one get per non-empty key
  std::vector<std::size_t> slots;  // slots[j]: the key position of batch[j]
  std::size_t size = 0;            // operations in use by this call

  std::span<Operation> operations() { return std::span<Operation>(batch.data(), size); }
  void Release() {
    if (batch.size() <= kKeptOperations) return;
    std::vector<Operation>().swap(batch);
    std::vector<std::size_t>().swap(slots);
    std::string().swap(key_storage);
  }
};

ReadScratch& ThisThreadScratch() {
  thread_local ReadScratch scratch;
  return scratch;
}

// The keys with the namespace in front, joined into one buffer that is sized
// up front, so the views into it stay valid; without a namespace, the keys.
std::string_view FullKey(std::string_view prefix, std::string_view key, std::string* storage) {
  if (prefix.empty()) return key;
  const std::size_t begin = storage->size();
  storage->append(prefix).append(key);
  return std::string_view(storage->data() + begin, prefix.size() + key.size());
}

void ReserveKeys(std::string_view prefix, std::span<const std::string_view> keys,
                 std::string* storage) {
  storage->clear();
  if (prefix.empty()) return;
  std::size_t total = 0;
  for (std::string_view key : keys) total += prefix.size() + key.size();
  storage->reserve(total);
}

// One get per non-empty key; an empty key's status is invalid_argument at once.
void PlanReads(std::string_view prefix, std::span<const std::string_view> keys,
               ReadScratch* scratch, std::vector<Status>* statuses) {
  ReserveKeys(prefix, keys, &scratch->key_storage);
  if (scratch->batch.size() < keys.size()) scratch->batch.resize(keys.size());
  scratch->slots.resize(keys.size());
  scratch->size = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty()) {
      (*statuses)[i] = Status::InvalidArgument("empty key");
      continue;
    }
    Operation& op = scratch->batch[scratch->size];
    op.kind = OpKind::kGet;
    op.key = FullKey(prefix, keys[i], &scratch->key_storage);
    op.status = Status::OK();
    scratch->slots[scratch->size++] = i;
  }
}

// A miss or an error leaves no stale bytes behind, but keeps the capacity.
void ClearValue(Item* item) {
  item->value.clear();
  item->flags = 0;
  item->cas = 0;
}

}  // namespace

void Cache::GetItemsInto(std::span<const std::string_view> keys, std::vector<Item>* items,
                         std::vector<Status>* statuses) {
  const CallCounter counter(metrics_table(), CacheOp::kGetMulti);
  items->resize(keys.size());
  statuses->resize(keys.size());
  ReadScratch& scratch = ThisThreadScratch();
  PlanReads(options_.key_namespace, keys, &scratch, statuses);
  for (std::size_t j = 0; j < scratch.size; ++j) {
    std::swap(scratch.batch[j].result, (*items)[scratch.slots[j]]);
  }
  backend_->Execute(scratch.operations());
  for (std::size_t j = 0; j < scratch.size; ++j) {
    Operation& op = scratch.batch[j];
    const std::size_t slot = scratch.slots[j];
    std::swap(op.result, (*items)[slot]);
    (*statuses)[slot] = std::move(op.status);
    op.key = {};
  }
  OutcomeTally tally;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    tally.Count((*statuses)[i]);
    if (!(*statuses)[i].ok()) ClearValue(&(*items)[i]);
  }
  scratch.Release();
  counter.Finish(tally);
}

void Cache::GetMultiInto(std::span<const std::string_view> keys,
                         std::vector<std::string>* values, std::vector<Status>* statuses) {
  // The strings travel inside Items: each value's buffer goes in as the Item's,
  // and the decoded value comes back out of it (a raw one is moved, not copied).
  thread_local std::vector<Item> items;
  values->resize(keys.size());
  items.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) items[i].value.swap((*values)[i]);
  GetItemsInto(keys, &items, statuses);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::string& value = (*values)[i];
    Status& status = (*statuses)[i];
    if (status.ok()) status = codec_->Decode(std::move(items[i]), &value);
    // An undecodable value, a miss or an error: the caller's buffer goes back.
    if (!status.ok()) {
      value.swap(items[i].value);
      value.clear();
    }
    if (items[i].value.capacity() > kKeptBufferBytes) {
      std::string().swap(items[i].value);
    } else {
      items[i].value.clear();
    }
  }
  if (items.size() > kKeptOperations) std::vector<Item>().swap(items);
}

}  // namespace cachet
