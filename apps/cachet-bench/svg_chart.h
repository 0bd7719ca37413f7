// --svg FILE: a grouped bar chart of a run, drawn by cachet-bench itself.
//
// One group per scenario, one bar per target, colours by target with a legend.
// Rates of different scenarios differ by orders of magnitude, so each group is
// normalised: the fastest target of the scenario is the full height, on a log
// scale over four powers of ten, and every bar is labelled with its own rate. A target without a rate gets "n/a".
#pragma once

#include <string>
#include <vector>

#include "figures.h"

namespace cachet::bench {

// A standalone SVG 1.1 document.
std::string RenderSvgChart(const std::vector<ScenarioFigures>& results, const std::string& title);

// "950", "12.3k", "4.56M".
std::string ShortRate(double rate);

}  // namespace cachet::bench
