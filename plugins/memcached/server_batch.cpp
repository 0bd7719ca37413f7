// Shared helpers of the per-protocol server batches.
#include "server_batch.h"

namespace cachet::memcached {

void FillItem(Operation& op, const Reply& reply) {
  // assign() reuses the capacity of the caller's Item.
  op.result.value.assign(reply.data.data(), reply.data.size());
  op.result.flags = reply.flags;
  op.result.cas = reply.cas;
  op.status = Status::OK();
}

}  // namespace cachet::memcached
