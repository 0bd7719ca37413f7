// cachet-bench's command line:
//   cachet-bench -c A.conf [-c B.conf]... [-o section.key=value]...
//                [--scenarios get,set] [--duration SECONDS | --ops N]
//                [--value-size BYTES] [--keys N [--split-keys]] [--repeat N]
//                [--threads N[,M...] [--cache-per-thread]] [--slice-ms MS]
//                [--format table|json|csv] [--svg FILE]
//                [--start-servers] [--no-peers] [--list] [--help]
//   cachet-bench --stampede -c A.conf [--threads N] [--duration SECONDS]
//                [--loader-ms MS] [--stampede-ttl-ms MS]
//   cachet-bench --near -c A.conf [--near-keys N] [--duration SECONDS] [--repeat N]
//   cachet-bench --scaling [--threads N] [--duration SECONDS] [--repeat N]
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cachet/result.h"
#include "cachet/status.h"
#include "scenario.h"

namespace cachet::bench {

struct BenchOptions {
  std::vector<std::string> configs;
  std::vector<std::string> overrides;      // applied to every config
  std::vector<const Scenario*> scenarios;  // in the order given; default: all
  bool hit_ratio = false;                  // --scenarios names hit_ratio (hit_ratio.h)
  bool memory_churn = false;               // --scenarios names memory_churn (memory_churn.h)
  double duration_seconds = 1.0;           // per scenario and config
  std::uint64_t ops = 0;                   // fixed iteration count instead; 0: by time
  std::size_t value_size = 10;             // bytes; the Perl seeds stored ~10-byte values
  std::uint64_t slice_ms = 100;            // length of one interleaving slice
  std::size_t keys = 100;                  // keys that get/set-like scenarios rotate through
  bool split_keys = false;  // --split-keys: `keys` is the column's, split between its threads
  // --cache-per-thread: each thread of a config's column opens a Cache of its
  // own, so a run shows what sharing one Cache between threads costs.
  bool cache_per_thread = false;
  // --threads 1,2: each count gets its own columns (and Caches), interleaved with
  // the others, labelled "<label> xN" beyond the first. Never empty.
  std::vector<unsigned> thread_counts{1};
  // Threads sharing each target: the first count (the one --stampede uses).
  unsigned threads() const noexcept { return thread_counts.front(); }
  unsigned repeat = 3;                     // repetitions; figures are their medians
  std::string format = "table";            // table | json | csv
  std::string svg_path;                    // "" for no chart
  bool start_servers = false;
  bool peers = true;
  bool baseline = false;  // add the plain unordered_map column (baseline.h)
  bool list = false;
  bool help = false;
  // --stampede: the GetOrCompute study (stampede.h) instead of the scenarios.
  bool stampede = false;
  std::uint64_t loader_ms = 50;          // --loader-ms: how long its loader takes
  std::uint64_t stampede_ttl_ms = 1000;  // --stampede-ttl-ms: the hot key's TTL
  // --near: the near cache study (near_study.h) instead of the scenarios.
  bool near = false;
  std::size_t near_keys = 100000;  // --near-keys: the Zipf key space
  // --scaling: how work that shares nothing scales over threads (scaling_study.h).
  bool scaling = false;
};

// kInvalidArgument naming the bad option or scenario.
Result<BenchOptions> ParseBenchOptions(const std::vector<std::string>& args);

void PrintBenchHelp(std::ostream& out);

}  // namespace cachet::bench
