// CacheObserver: a hook that sees every operation of a Cache as it ends.
//
// An application registers one with Cache::SetObserver to feed its tracing
// (OpenTelemetry spans, structured logs, slow-operation reports). Each call of
// the Cache then reports one OperationEvent: the operation, how many keys it
// carried, the store, the server it went to, its outcome and its duration.
// While no observer is registered nothing of this runs: no clock is read for it
// and no event is built.
//
// OnOperation runs on the thread that made the call, after the call is done and
// before it returns to its caller, so it should be quick; it may be called from
// several threads at once and must not throw. The event's views are valid only
// during the call.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include "cachet/export.h"
#include "cachet/metrics.h"
#include "cachet/status.h"

namespace cachet {

struct OperationEvent {
  CacheOp op;
  std::size_t keys;        // 1 for a single-key call, the batch size for a batch
  std::string_view store;  // the backend's name: "memcached", "memory", ...
  // "host:port" of the server the call exchanged with; "" for a store without
  // servers or a call that reached none; "(several)" for a batch over several.
  std::string_view server;
  // The call's outcome. A batch reports its first error code if any key failed,
  // else not_found if any key missed, else ok; `keys_failed` counts the errors.
  const Status& status;
  std::size_t keys_failed;
  std::chrono::nanoseconds duration;
};

class CACHET_EXPORT CacheObserver {
 public:
  CacheObserver() = default;
  CacheObserver(const CacheObserver&) = delete;
  CacheObserver& operator=(const CacheObserver&) = delete;
  virtual ~CacheObserver();

  virtual void OnOperation(const OperationEvent& event) noexcept = 0;
};

}  // namespace cachet
