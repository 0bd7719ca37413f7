// The per-scenario report: heading, cmpthese table, failure notes.
#include "report.h"

#include <ostream>

#include "cmpthese.h"

namespace cachet::bench {
namespace {

void PrintNotes(std::span<const Target> targets, std::span<const Measurement> results,
                std::ostream& out) {
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const Measurement& m = results[t];
    if (m.stopped) {
      out << "  " << targets[t].label << ": stopped, no rate: " << m.first_failure.ToString()
          << '\n';
    } else if (m.failures > 0) {
      out << "  " << targets[t].label << ": " << m.failures << " of " << m.iterations
          << " iterations failed; first: " << m.first_failure.ToString() << '\n';
    }
  }
}

}  // namespace

bool AnyFailure(std::span<const Measurement> results) {
  for (const Measurement& m : results) {
    if (m.stopped || m.failures > 0) return true;
  }
  return false;
}

void PrintScenarioReport(const Scenario& scenario, std::span<const Target> targets,
                         std::span<const Measurement> results, std::ostream& out) {
  out << "==== " << scenario.name << ": " << scenario.description << " ====\n";
  std::vector<RateRow> rows;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (!results[t].stopped && results[t].Rate() > 0) {
      rows.push_back({targets[t].label, results[t].Rate()});
    }
  }
  out << FormatCmpthese(std::move(rows));
  PrintNotes(targets, results, out);
}

}  // namespace cachet::bench
