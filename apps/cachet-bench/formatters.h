// The output formats of cachet-bench: --format table (cmpthese per scenario,
// then the spread and client CPU of each column), json (the run's settings,
// versions and machine, and one record per scenario and target) and csv (the
// records).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "figures.h"

namespace cachet::bench {

std::string FormatScenarioTable(const ScenarioFigures& scenario);
// {"settings", "versions", "machine", "failed", "rows": [one record per figure]}.
std::string FormatJson(const RunInfo& info, const std::vector<ScenarioFigures>& results);
std::string FormatCsv(const std::vector<ScenarioFigures>& results);

// Nanoseconds as "850 ns", "12.3 us", "4.56 ms".
std::string FormatDuration(double ns);

}  // namespace cachet::bench
