// Medians and spreads of repeated measurements.
#include "figures.h"

#include <algorithm>

namespace cachet::bench {

double SpreadPercent(const Figure& figure) {
  if (figure.rate <= 0) return 0;
  return 50.0 * (figure.rate_max - figure.rate_min) / figure.rate;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

bool AnyColumnFailed(const std::vector<ScenarioFigures>& results) {
  for (const ScenarioFigures& s : results) {
    for (const Figure& f : s.figures) {
      if (f.failures > 0 || (!f.ran && !f.skipped)) return true;
    }
  }
  return false;
}

}  // namespace cachet::bench
