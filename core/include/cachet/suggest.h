// Suggest: "did you mean" hints for a mistyped name: a command, a store, a
// config option, a benchmark scenario. One rule everywhere: the known name the
// fewest edits away (insertions, deletions, substitutions of one byte), when
// that is at most a third of the typed name's length, clamped to 1..3 edits.
// Further away, a suggestion would be a guess rather than a typo's repair.
// Plain functions of their arguments; safe from any thread.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "cachet/export.h"

namespace cachet {

// The Levenshtein distance between `a` and `b`, in single-byte edits.
CACHET_EXPORT std::size_t EditDistance(std::string_view a, std::string_view b);

// The name in `known` closest to `typed` under the rule above (the first of
// equally close ones); "" when none is close enough.
CACHET_EXPORT std::string ClosestName(std::string_view typed,
                                      std::span<const std::string_view> known);

// " (did you mean 'NAME'?)" for ClosestName, or "" when there is none: ready to
// append to an "unknown ..." message.
CACHET_EXPORT std::string DidYouMean(std::string_view typed,
                                     std::span<const std::string_view> known);

}  // namespace cachet
