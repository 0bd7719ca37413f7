// The one edit distance and suggestion rule (see suggest.h).
#include "cachet/suggest.h"

#include <algorithm>
#include <vector>

namespace cachet {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string ClosestName(std::string_view typed, std::span<const std::string_view> known) {
  const std::size_t limit = std::clamp<std::size_t>(typed.size() / 3, 1, 3);
  std::string_view best;
  std::size_t best_distance = limit + 1;
  for (std::string_view name : known) {
    const std::size_t distance = EditDistance(typed, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  return std::string(best);
}

std::string DidYouMean(std::string_view typed, std::span<const std::string_view> known) {
  const std::string closest = ClosestName(typed, known);
  return closest.empty() ? std::string() : " (did you mean '" + closest + "'?)";
}

}  // namespace cachet
