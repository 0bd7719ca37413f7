// A rate table laid out exactly like Perl's Benchmark::cmpthese.
//
// Rows are sorted by rate, slowest first; the columns are the name, the rate, and
// one column per entry giving how much faster (or slower) the row is than that
// column's entry, in percent ("--" on the diagonal). Column widths are widened
// towards 80 characters as cmpthese does, so tables from cachet-bench and from the
// Perl seed benchmarks can be read side by side.
#pragma once

#include <string>
#include <vector>

namespace cachet::bench {

struct RateRow {
  std::string name;
  double rate = 0;  // per second; must be > 0
};

// The table as text, one line per row, each ending with '\n'. Rows of equal rate
// keep their order.
std::string FormatCmpthese(std::vector<RateRow> rows);

}  // namespace cachet::bench
