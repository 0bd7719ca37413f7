// IniLayout: where every section and key of an INI text sits, by line number.
//
// Boost.Program_options reads the values but keeps no line numbers, so the config
// scans the same text once more, the same way (a '#' starts a comment, blanks
// around names and values are trimmed), to name the line in every message. The
// scan also rejects what Program_options would misread or crash on: a line that is
// neither "[section]" nor "key = value", an empty section name, a key outside any
// section, and a key set twice in one section.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cachet/result.h"

namespace cachet {

struct IniKeyLine {
  std::string section;
  std::string key;
  int line = 0;  // 1-based
};

struct IniLayout {
  std::vector<std::string> sections;  // in order of first appearance
  std::vector<IniKeyLine> keys;       // in file order, one per "key = value" line
};

// `source` names the text in messages ("shop.conf"). kConfigError naming the
// source and the line for any malformed line or duplicated key.
Result<IniLayout> ScanIniLayout(std::string_view text, std::string_view source);

// "a, b ,c" -> {"a", "b", "c"}; empty items are dropped.
std::vector<std::string> SplitCommaList(std::string_view text);

// `text` without leading and trailing blanks (space, tab, CR, LF).
std::string_view TrimBlanks(std::string_view text);

}  // namespace cachet
