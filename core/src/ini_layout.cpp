// The line-number scan of an INI text (see ini_layout.h).
#include "ini_layout.h"

#include <algorithm>
#include <string>

namespace cachet {

namespace {

constexpr std::string_view kBlanks = " \t\r\n";

std::string WhereLine(std::string_view source, int line) {
  return std::string(source) + ":" + std::to_string(line) + ": ";
}

// The line as Program_options sees it: the comment cut off, blanks trimmed.
std::string_view MeaningfulPart(std::string_view raw) {
  std::size_t hash = raw.find('#');
  if (hash != std::string_view::npos) raw = raw.substr(0, hash);
  return TrimBlanks(raw);
}

class LayoutBuilder {
 public:
  explicit LayoutBuilder(std::string_view source) : source_(source) {}

  // Records one line; an error message when it is malformed, "" otherwise.
  std::string Add(std::string_view text, int line) {
    if (text.empty()) return {};
    if (text.front() == '[') return AddSection(text, line);
    return AddKey(text, line);
  }

  IniLayout Take() { return std::move(layout_); }

 private:
  std::string AddSection(std::string_view text, int line) {
    if (text.back() != ']') {
      return WhereLine(source_, line) + "'" + std::string(text) +
             "': a section header needs a closing ']'";
    }
    std::string_view name = text.substr(1, text.size() - 2);
    if (TrimBlanks(name).empty()) return WhereLine(source_, line) + "empty section name '[]'";
    // Overrides split "section.key" at the first '.', so a dot cannot be in a section name.
    if (name.find_first_of(" \t.") != std::string_view::npos) {
      return WhereLine(source_, line) + "'" + std::string(text) +
             "': a section name cannot contain blanks or '.'";
    }
    section_ = name;
    if (std::find(layout_.sections.begin(), layout_.sections.end(), section_) ==
        layout_.sections.end()) {
      layout_.sections.push_back(section_);
    }
    return {};
  }

  std::string AddKey(std::string_view text, int line) {
    std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
      return WhereLine(source_, line) + "'" + std::string(text) +
             "': expected 'key = value' or '[section]'";
    }
    std::string key(TrimBlanks(text.substr(0, eq)));
    if (key.empty()) return WhereLine(source_, line) + "'" + std::string(text) + "': no key";
    if (section_.empty()) {
      return WhereLine(source_, line) + key + ": key outside any section (add e.g. [cache])";
    }
    for (const IniKeyLine& seen : layout_.keys) {
      if (seen.section == section_ && seen.key == key) {
        return WhereLine(source_, line) + "[" + section_ + "] " + key + ": set twice, on lines " +
               std::to_string(seen.line) + " and " + std::to_string(line);
      }
    }
    layout_.keys.push_back({section_, std::move(key), line});
    return {};
  }

  std::string_view source_;
  std::string section_;
  IniLayout layout_;
};

}  // namespace

std::string_view TrimBlanks(std::string_view text) {
  std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  std::size_t last = text.find_last_not_of(kBlanks);
  return text.substr(first, last - first + 1);
}

std::vector<std::string> SplitCommaList(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = TrimBlanks(text.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

Result<IniLayout> ScanIniLayout(std::string_view text, std::string_view source) {
  LayoutBuilder builder(source);
  int line = 0;
  while (!text.empty()) {
    ++line;
    std::size_t newline = text.find('\n');
    std::string error = builder.Add(MeaningfulPart(text.substr(0, newline)), line);
    if (!error.empty()) return Status::ConfigError(error);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return builder.Take();
}

}  // namespace cachet
