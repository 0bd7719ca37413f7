// BatchPlan: the keys of one Cache batch call, turned into Operations for the Backend.
//
// Every batch call of the Cache (GetMulti, GetMultiInto, SetMulti, RemoveMulti)
// starts the same way: one Operation per non-empty key, with the namespace in
// front of the key, and for an empty key an invalid_argument status at once and
// no Operation. `slot(j)` maps the j-th Operation back to its key's position.
//
// A plan can be kept and planned again (the batch reads into buffers keep one per
// thread): its Operations and key buffer stay allocated between calls. A reused
// Operation keeps every field Plan() does not set, so a kept plan must only ever
// be used for one kind of operation whose other fields its user leaves as it
// found them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/status.h"
#include "cache_metrics.h"

namespace cachet {

class BatchPlan {
 public:
  // Plans one `kind` Operation per non-empty key of `keys`. `statuses` has
  // keys.size() entries; an empty key's entry becomes invalid_argument (counted
  // in `tally` as an error), the others are left for the caller to fill.
  void Plan(std::string_view prefix, std::span<const std::string_view> keys, OpKind kind,
            std::span<Status> statuses, OutcomeTally* tally);

  std::span<Operation> operations() noexcept { return {batch_.data(), size_}; }
  std::size_t size() const noexcept { return size_; }
  Operation& op(std::size_t j) noexcept { return batch_[j]; }
  std::size_t slot(std::size_t j) const noexcept { return slots_[j]; }

  // Moves each Operation's status to its key's position and counts it.
  // `tally` may be null, for a caller that counts the outcomes itself.
  void CollectStatuses(std::span<Status> statuses, OutcomeTally* tally);

  // Gives the memory back if this call's batch was a large one, so that one huge
  // batch does not stay pinned in a kept plan.
  void ReleaseIfLarge() noexcept;

 private:
  static constexpr std::size_t kKeptOperations = 4096;

  std::string key_storage_;          // the namespaced keys, joined
  std::vector<Operation> batch_;     // may hold more than size_ when kept
  std::vector<std::size_t> slots_;   // slots_[j]: the key position of batch_[j]
  std::size_t size_ = 0;             // Operations planned by the last Plan()
};

}  // namespace cachet
