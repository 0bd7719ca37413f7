// WritePrometheus and WriteMetricsJson: a Cache's figures for monitoring tools.
#include "cachet/metrics_format.h"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cachet/cache.h"

namespace cachet {

namespace {

// The quantiles reported beside each histogram, and their JSON names.
struct Quantile {
  double q;
  const char* label;
  const char* json_name;
};
constexpr std::array<Quantile, 4> kQuantiles = {
    {{0.5, "0.5", "p50"}, {0.9, "0.9", "p90"}, {0.99, "0.99", "p99"}, {0.999, "0.999", "p999"}}};

// The histogram's `le` bounds: one nanosecond below every other power of two
// from 256 ns to about 69 s. The powers of two are bucket bounds of
// LatencyHistogram, so each count is exact.
constexpr int kFirstBoundLog2 = 8;
constexpr int kLastBoundLog2 = 36;

// `ns` in seconds, exactly: every digit of the nanoseconds, none rounded away
// (a bucket bound printed rounded would claim counts it does not hold).
std::string Seconds(std::uint64_t ns) {
  std::string text = std::to_string(ns / 1000000000);
  const std::uint64_t fraction = ns % 1000000000;
  if (fraction == 0) return text;
  char digits[16];
  std::snprintf(digits, sizeof digits, ".%09llu", static_cast<unsigned long long>(fraction));
  text += digits;
  text.erase(text.find_last_not_of('0') + 1);
  return text;
}

// A label value with the escapes the exposition format requires.
std::string LabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Family(std::ostream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

CacheOp OpAt(std::size_t i) { return static_cast<CacheOp>(i); }

void WriteOperations(const Metrics& metrics, std::ostream& out) {
  Family(out, "cachet_calls_total", "counter", "Calls per operation; a batch is one call.");
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    out << "cachet_calls_total{op=\"" << CacheOpName(OpAt(i)) << "\"} " << metrics[i].calls << '\n';
  }
  Family(out, "cachet_operations_total", "counter",
         "Keys per operation and outcome: hit (found or done), miss (not_found, not_stored, "
         "exists) or error.");
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    const std::string_view op = CacheOpName(OpAt(i));
    const OpMetrics& m = metrics[i];
    out << "cachet_operations_total{op=\"" << op << "\",result=\"hit\"} " << m.hits << '\n'
        << "cachet_operations_total{op=\"" << op << "\",result=\"miss\"} " << m.misses << '\n'
        << "cachet_operations_total{op=\"" << op << "\",result=\"error\"} " << m.errors << '\n';
  }
  Family(out, "cachet_operation_errors_total", "counter", "Keys that failed, by status code.");
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    for (std::size_t code = 0; code < kStatusCodeCount; ++code) {
      const auto status = static_cast<StatusCode>(code);
      if (!Status::FromCode(status, {}).IsError() || metrics[i].by_status[code] == 0) continue;
      out << "cachet_operation_errors_total{op=\"" << CacheOpName(OpAt(i)) << "\",code=\""
          << StatusCodeName(status) << "\"} " << metrics[i].by_status[code] << '\n';
    }
  }
}

void WriteLatency(const Metrics& metrics, std::ostream& out) {
  Family(out, "cachet_operation_duration_seconds", "histogram",
         "Durations of the timed calls (the first 64 per operation and thread, then 1 in 64).");
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    const LatencyHistogram& h = metrics[i].latency;
    if (h.count() == 0) continue;
    const std::string_view op = CacheOpName(OpAt(i));
    // Every count comes from the buckets of this one snapshot, so they rise
    // with `le` and +Inf equals _count (count() may lag its buckets).
    std::uint64_t total = 0;
    for (std::size_t b = 0; b < LatencyHistogram::kBuckets; ++b) total += h.bucket(b);
    for (int log2 = kFirstBoundLog2; log2 <= kLastBoundLog2; log2 += 2) {
      // Durations are whole nanoseconds: those below 2^log2 are exactly those
      // less than or equal to 2^log2 - 1, which is the bound `le` states.
      const std::uint64_t bound = std::uint64_t{1} << log2;
      out << "cachet_operation_duration_seconds_bucket{op=\"" << op << "\",le=\""
          << Seconds(bound - 1) << "\"} " << h.CountBelow(bound) << '\n';
    }
    out << "cachet_operation_duration_seconds_bucket{op=\"" << op << "\",le=\"+Inf\"} " << total
        << '\n'
        << "cachet_operation_duration_seconds_sum{op=\"" << op << "\"} " << Seconds(h.sum_ns())
        << '\n'
        << "cachet_operation_duration_seconds_count{op=\"" << op << "\"} " << total << '\n';
  }
  Family(out, "cachet_operation_duration_quantile_seconds", "gauge",
         "Quantiles of the timed calls' durations, within 25 %.");
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    const LatencyHistogram& h = metrics[i].latency;
    if (h.count() == 0) continue;
    for (const Quantile& q : kQuantiles) {
      out << "cachet_operation_duration_quantile_seconds{op=\"" << CacheOpName(OpAt(i))
          << "\",quantile=\"" << q.label << "\"} " << Seconds(h.PercentileNs(q.q)) << '\n';
    }
  }
  Family(out, "cachet_operation_duration_max_seconds", "gauge", "The slowest timed call.");
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    const LatencyHistogram& h = metrics[i].latency;
    if (h.count() == 0) continue;
    out << "cachet_operation_duration_max_seconds{op=\"" << CacheOpName(OpAt(i)) << "\"} "
        << Seconds(h.max_ns()) << '\n';
  }
}

// One line per server of a per-server family.
template <class Value>
void PerServer(std::ostream& out, std::span<const ServerHealth> servers, const char* name,
               const char* type, const char* help, Value value) {
  Family(out, name, type, help);
  for (const ServerHealth& h : servers) {
    out << name << "{server=\"" << LabelValue(h.server) << "\"} " << value(h) << '\n';
  }
}

void WriteServers(std::span<const ServerHealth> servers, std::ostream& out) {
  if (servers.empty()) return;
  PerServer(out, servers, "cachet_server_up", "gauge",
            "1 while the server is in use, 0 while it rests after consecutive failures.",
            [](const ServerHealth& h) { return h.dead ? 0 : 1; });
  PerServer(out, servers, "cachet_server_requests_total", "counter", "Exchanges with the server.",
            [](const ServerHealth& h) { return h.requests; });
  Family(out, "cachet_server_errors_total", "counter", "Exchanges that failed, by kind.");
  for (const ServerHealth& h : servers) {
    const std::string server = LabelValue(h.server);
    // Clamped: a store's own Backend::Health may count kinds beyond its errors.
    const std::uint64_t kinds_sum = h.timeouts + h.unavailable + h.io_errors + h.protocol_errors;
    const std::uint64_t other = h.errors > kinds_sum ? h.errors - kinds_sum : 0;
    const std::pair<const char*, std::uint64_t> kinds[] = {{"timeout", h.timeouts},
                                                           {"unavailable", h.unavailable},
                                                           {"io", h.io_errors},
                                                           {"protocol", h.protocol_errors},
                                                           {"other", other}};
    for (const auto& [kind, count] : kinds) {
      out << "cachet_server_errors_total{server=\"" << server << "\",kind=\"" << kind << "\"} "
          << count << '\n';
    }
  }
  PerServer(out, servers, "cachet_server_connects_total", "counter",
            "Connect attempts, failed ones included: the first ones and every reconnect.",
            [](const ServerHealth& h) { return h.connects; });
  PerServer(out, servers, "cachet_server_marked_dead_total", "counter",
            "Times the server reached the failure limit and was set to rest.",
            [](const ServerHealth& h) { return h.marked_dead; });
  PerServer(out, servers, "cachet_server_consecutive_failures", "gauge",
            "Failures since the last success.",
            [](const ServerHealth& h) { return h.consecutive_failures; });
  PerServer(out, servers, "cachet_server_connections", "gauge",
            "Connections open to the server now, lent or idle.",
            [](const ServerHealth& h) { return h.connections; });
  PerServer(out, servers, "cachet_server_pool_timeouts_total", "counter",
            "Calls that waited for a connection until their deadline (max_connections all lent).",
            [](const ServerHealth& h) { return h.pool_timeouts; });
}

void WriteNear(const NearMetrics& near, std::ostream& out) {
  if (!near.enabled) return;
  Family(out, "cachet_near_info", "gauge", "The near cache in front of the store.");
  out << "cachet_near_info{invalidation=\"" << (near.tracking ? "tracking" : "ttl") << "\"} 1\n";
  Family(out, "cachet_near_live", "gauge",
         "1 while the near cache may serve entries (tracking: the store's reports are live).");
  out << "cachet_near_live " << (near.live ? 1 : 0) << '\n';
  struct Figure {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t value;
  };
  const Figure figures[] = {
      {"cachet_near_hits_total", "counter", "Reads answered in process, cached misses included.",
       near.hits},
      {"cachet_near_misses_total", "counter", "Reads that went to the store.", near.misses},
      {"cachet_near_invalidations_total", "counter",
       "Keys the store reported changed (a flush counts one).", near.invalidations},
      {"cachet_near_dropped_by_lost_link_total", "counter",
       "Entries dropped because the store's reports were lost or the topology changed.",
       near.dropped_by_lost_link},
      {"cachet_near_dropped_by_stream_fault_total", "counter",
       "Entries dropped because a connection saw bytes it could not account for.",
       near.dropped_by_stream_fault},
      {"cachet_near_entries", "gauge", "Entries held now.", near.entries},
      {"cachet_near_bytes", "gauge", "Bytes the near cache holds now.", near.bytes},
  };
  for (const Figure& f : figures) {
    Family(out, f.name, f.type, f.help);
    out << f.name << ' ' << f.value << '\n';
  }
}

nlohmann::json LatencyJson(const LatencyHistogram& h) {
  nlohmann::json j = {{"count", h.count()}, {"sum", h.sum_ns()}};
  for (const Quantile& q : kQuantiles) j[q.json_name] = h.PercentileNs(q.q);
  j["max"] = h.max_ns();
  return j;
}

void WriteInfo(std::string_view store, std::ostream& out) {
  Family(out, "cachet_info", "gauge", "The store this Cache uses.");
  out << "cachet_info{store=\"" << LabelValue(store) << "\"} 1\n";
}

}  // namespace

void WritePrometheus(std::string_view store, const Metrics& metrics,
                     std::span<const ServerHealth> servers, std::ostream& out) {
  WritePrometheus(store, metrics, servers, NearMetrics{}, out);
}

void WritePrometheus(std::string_view store, const Metrics& metrics,
                     std::span<const ServerHealth> servers, const NearMetrics& near,
                     std::ostream& out) {
  WriteInfo(store, out);
  WriteOperations(metrics, out);
  WriteLatency(metrics, out);
  WriteServers(servers, out);
  WriteNear(near, out);
}

void WriteMetricsJson(std::string_view store, const Metrics& metrics,
                      std::span<const ServerHealth> servers, std::ostream& out) {
  WriteMetricsJson(store, metrics, servers, NearMetrics{}, out);
}

void WriteMetricsJson(std::string_view store, const Metrics& metrics,
                      std::span<const ServerHealth> servers, const NearMetrics& near,
                      std::ostream& out) {
  nlohmann::json operations = nlohmann::json::object();
  for (std::size_t i = 0; i < kCacheOpCount; ++i) {
    const OpMetrics& m = metrics[i];
    if (m.calls == 0) continue;
    nlohmann::json by_status = nlohmann::json::object();
    for (std::size_t code = 0; code < kStatusCodeCount; ++code) {
      if (m.by_status[code] != 0) {
        by_status[std::string(StatusCodeName(static_cast<StatusCode>(code)))] = m.by_status[code];
      }
    }
    operations[std::string(CacheOpName(OpAt(i)))] = {{"calls", m.calls},
                                                     {"keys", m.keys},
                                                     {"hits", m.hits},
                                                     {"misses", m.misses},
                                                     {"errors", m.errors},
                                                     {"by_status", by_status},
                                                     {"latency_ns", LatencyJson(m.latency)}};
  }
  nlohmann::json server_list = nlohmann::json::array();
  for (const ServerHealth& h : servers) {
    server_list.push_back({{"server", h.server},
                           {"up", !h.dead},
                           {"requests", h.requests},
                           {"errors", h.errors},
                           {"timeouts", h.timeouts},
                           {"unavailable", h.unavailable},
                           {"io_errors", h.io_errors},
                           {"protocol_errors", h.protocol_errors},
                           {"connects", h.connects},
                           {"marked_dead", h.marked_dead},
                           {"consecutive_failures", h.consecutive_failures},
                           {"connections", h.connections},
                           {"pool_timeouts", h.pool_timeouts}});
  }
  nlohmann::json doc = {
      {"store", std::string(store)}, {"operations", operations}, {"servers", server_list}};
  if (near.enabled) {
    doc["near"] = {{"invalidation", near.tracking ? "tracking" : "ttl"},
                   {"live", near.live},
                   {"hits", near.hits},
                   {"misses", near.misses},
                   {"invalidations", near.invalidations},
                   {"dropped_by_lost_link", near.dropped_by_lost_link},
                   {"dropped_by_stream_fault", near.dropped_by_stream_fault},
                   {"entries", near.entries},
                   {"bytes", near.bytes}};
  }
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void WritePrometheus(const Cache& cache, std::ostream& out) {
  const std::vector<ServerHealth> servers = cache.Health();
  if (!cache.options().metrics) {
    // Nothing was counted: no call or latency families, whose zeros would read as an idle
    // Cache. The servers' health and the near tier are kept whatever `metrics` says.
    WriteInfo(cache.store_name(), out);
    WriteServers(servers, out);
    WriteNear(cache.near_metrics(), out);
    return;
  }
  WritePrometheus(cache.store_name(), cache.metrics(), servers, cache.near_metrics(), out);
}

void WriteMetricsJson(const Cache& cache, std::ostream& out) {
  const std::vector<ServerHealth> servers = cache.Health();
  WriteMetricsJson(cache.store_name(), cache.metrics(), servers, cache.near_metrics(), out);
}

}  // namespace cachet
