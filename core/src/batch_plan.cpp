// BatchPlan: see batch_plan.h.
#include "batch_plan.h"

#include <utility>

namespace cachet {

namespace {

// The keys with the namespace in front are joined into one buffer sized up
// front, so a batch allocates once and the views into it stay valid.
void ReserveKeys(std::string_view prefix, std::span<const std::string_view> keys,
                 std::string* storage) {
  storage->clear();
  if (prefix.empty()) return;
  std::size_t total = 0;
  for (std::string_view key : keys) total += prefix.size() + key.size();
  storage->reserve(total);
}

std::string_view FullKey(std::string_view prefix, std::string_view key, std::string* storage) {
  if (prefix.empty()) return key;
  const std::size_t begin = storage->size();
  storage->append(prefix).append(key);
  return std::string_view(storage->data() + begin, prefix.size() + key.size());
}

}  // namespace

void BatchPlan::Plan(std::string_view prefix, std::span<const std::string_view> keys,
                     OpKind kind, std::span<Status> statuses, OutcomeTally* tally) {
  ReserveKeys(prefix, keys, &key_storage_);
  if (batch_.size() < keys.size()) batch_.resize(keys.size());
  if (slots_.size() < keys.size()) slots_.resize(keys.size());
  size_ = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty()) {
      statuses[i] = Status::InvalidArgument("empty key");
      tally->Count(statuses[i]);
      continue;
    }
    Operation& op = batch_[size_];
    op.kind = kind;
    op.key = FullKey(prefix, keys[i], &key_storage_);
    slots_[size_++] = i;
  }
}

void BatchPlan::CollectStatuses(std::span<Status> statuses, OutcomeTally* tally) {
  for (std::size_t j = 0; j < size_; ++j) {
    Status& status = statuses[slots_[j]];
    status = std::move(batch_[j].status);
    if (tally != nullptr) tally->Count(status);
  }
}

void BatchPlan::ReleaseIfLarge() noexcept {
  if (batch_.size() <= kKeptOperations) return;
  std::vector<Operation>().swap(batch_);
  std::vector<std::size_t>().swap(slots_);
  std::string().swap(key_storage_);
  size_ = 0;
}

}  // namespace cachet
