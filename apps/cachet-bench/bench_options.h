// cachet-bench's command line:
//   cachet-bench -c A.conf [-c B.conf]... [-o section.key=value]...
//                [--scenarios get,set] [--duration SECONDS | --ops N]
//                [--value-size BYTES] [--slice-ms MS] [--list] [--help]
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cachet/result.h"
#include "scenario.h"

namespace cachet::bench {

struct BenchOptions {
  std::vector<std::string> configs;
  std::vector<std::string> overrides;      // applied to every config
  std::vector<const Scenario*> scenarios;  // in the order given; default: all
  double duration_seconds = 1.0;           // per scenario and config
  std::uint64_t ops = 0;                   // fixed iteration count instead; 0: by time
  std::size_t value_size = 10;             // bytes; the Perl seeds stored ~10-byte values
  std::uint64_t slice_ms = 100;            // length of one interleaving slice
  bool list = false;
  bool help = false;
};

// kInvalidArgument naming the bad option or scenario.
Result<BenchOptions> ParseBenchOptions(const std::vector<std::string>& args);

void PrintBenchHelp(std::ostream& out);

}  // namespace cachet::bench
