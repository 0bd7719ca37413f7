// The output formats of cachet-bench: --format table (cmpthese per scenario,
// then the spread and client CPU of each column), json and csv (one record per
// scenario and target).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "figures.h"

namespace cachet::bench {

std::string FormatScenarioTable(const ScenarioFigures& scenario);
std::string FormatJson(const std::vector<ScenarioFigures>& results);
std::string FormatCsv(const std::vector<ScenarioFigures>& results);

// Nanoseconds as "850 ns", "12.3 us", "4.56 ms".
std::string FormatDuration(double ns);

}  // namespace cachet::bench
