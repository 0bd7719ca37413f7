// Prints a scenario's results: a heading, the cmpthese table of the targets that
// ran, and a note for each target that failed or was stopped.
#pragma once

#include <iosfwd>
#include <span>

#include "runner.h"
#include "scenario.h"
#include "target.h"

namespace cachet::bench {

void PrintScenarioReport(const Scenario& scenario, std::span<const Target> targets,
                         std::span<const Measurement> results, std::ostream& out);

// True when any target failed an iteration or was stopped.
bool AnyFailure(std::span<const Measurement> results);

}  // namespace cachet::bench
