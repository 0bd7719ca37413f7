// --format table: per scenario a heading, the cmpthese table, and one detail line
// per target (median, spread, client CPU per iteration and latency percentiles,
// or why it has no rate).
#include <cstdio>

#include "cmpthese.h"
#include "formatters.h"

namespace cachet::bench {
namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string DetailLine(const Figure& f, std::size_t label_width) {
  std::string line = "  " + f.target + std::string(label_width - f.target.size(), ' ') + "  ";
  if (!f.ran) return line + "no rate: " + f.note + '\n';
  line += Printf("%.0f/s", f.rate) + " +-" + Printf("%.1f%%", SpreadPercent(f)) + ", client CPU " +
          FormatDuration(f.cpu_ns_per_op) + "/op";
  if (f.p50_ns > 0) {
    line += ", p50 " + FormatDuration(f.p50_ns) + " p99 " + FormatDuration(f.p99_ns) + " p99.9 " +
            FormatDuration(f.p999_ns) + " max " + FormatDuration(f.max_ns);
  }
  if (f.failures > 0) {
    line += ", " + std::to_string(f.failures) + " of " + std::to_string(f.iterations) +
            " failed: " + f.note;
  }
  return line + '\n';
}

}  // namespace

std::string FormatDuration(double ns) {
  if (ns < 1000) return Printf("%.0f ns", ns);
  if (ns < 1e6) return Printf("%.3g us", ns / 1e3);
  return Printf("%.3g ms", ns / 1e6);
}

std::string FormatScenarioTable(const ScenarioFigures& scenario) {
  std::string out = "==== " + scenario.scenario + ": " + scenario.description + " ====\n";
  std::vector<RateRow> rows;
  std::size_t label_width = 0;
  for (const Figure& f : scenario.figures) {
    if (f.ran && f.rate > 0) rows.push_back({f.target, f.rate});
    label_width = std::max(label_width, f.target.size());
  }
  out += FormatCmpthese(std::move(rows));
  for (const Figure& f : scenario.figures) out += DetailLine(f, label_width);
  return out;
}

}  // namespace cachet::bench
