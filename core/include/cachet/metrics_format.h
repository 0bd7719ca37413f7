// Writing a Cache's metrics and server health for monitoring tools.
//
// WritePrometheus writes the Prometheus text exposition format (version 0.0.4),
// ready to serve on a /metrics endpoint:
//   cachet_info{store}                                  gauge, 1
//   cachet_calls_total{op}                              counter: calls (a batch is one)
//   cachet_operations_total{op,result}                  counter: keys; result hit|miss|error
//   cachet_operation_errors_total{op,code}              counter: keys that failed, by code
//   cachet_operation_duration_seconds{op}               histogram of the timed calls
//   cachet_operation_duration_quantile_seconds{op,quantile}  gauge: 0.5 0.9 0.99 0.999
//   cachet_operation_duration_max_seconds{op}           gauge
//   cachet_server_up{server}                            gauge: 0 while marked dead
//   cachet_server_requests_total{server}                counter
//   cachet_server_errors_total{server,kind}             counter, kind: timeout, unavailable,
//                                                       io, protocol or other
//   cachet_server_connects_total{server}                counter
//   cachet_server_marked_dead_total{server}             counter
//   cachet_server_consecutive_failures{server}          gauge
//   cachet_server_connections{server}                   gauge: open now, lent or idle
//   cachet_server_pool_timeouts_total{server}           counter: waits for max_connections
// and, when a near cache is in front of the store (near_cache.h), its tier:
//   cachet_near_info{invalidation}                      gauge, 1; tracking or ttl
//   cachet_near_live                                    gauge: 1 while entries may be served
//   cachet_near_hits_total                              counter: reads answered in process
//   cachet_near_misses_total                            counter: reads that went to the store
//   cachet_near_invalidations_total                     counter: keys the store reported changed
//   cachet_near_dropped_by_lost_link_total              counter: entries dropped with the link
//   cachet_near_dropped_by_stream_fault_total           counter: dropped after a stream fault
//   cachet_near_entries                                 gauge
//   cachet_near_bytes                                   gauge: bytes held
// One exposition covers one Cache: its series carry no label naming the Cache,
// so a process serving several writes each on its own endpoint (or scrape
// path); two in one exposition would repeat every series.
// WriteMetricsJson writes the same figures as one JSON object (the near tier
// under "near", present only when a near cache is on). Both take a
// snapshot (Cache::metrics() and Cache::Health()) and may run from any thread.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "cachet/export.h"
#include "cachet/health.h"
#include "cachet/metrics.h"
#include "cachet/near_cache.h"

namespace cachet {

class Cache;

CACHET_EXPORT void WritePrometheus(const Cache& cache, std::ostream& out);
CACHET_EXPORT void WriteMetricsJson(const Cache& cache, std::ostream& out);

// The same from figures already taken; `store` is the backend's name, `near`
// the near tier's (written only when near.enabled).
CACHET_EXPORT void WritePrometheus(std::string_view store, const Metrics& metrics,
                                   std::span<const ServerHealth> servers, std::ostream& out);
CACHET_EXPORT void WriteMetricsJson(std::string_view store, const Metrics& metrics,
                                    std::span<const ServerHealth> servers, std::ostream& out);
CACHET_EXPORT void WritePrometheus(std::string_view store, const Metrics& metrics,
                                   std::span<const ServerHealth> servers, const NearMetrics& near,
                                   std::ostream& out);
CACHET_EXPORT void WriteMetricsJson(std::string_view store, const Metrics& metrics,
                                    std::span<const ServerHealth> servers, const NearMetrics& near,
                                    std::ostream& out);

}  // namespace cachet
