// Typed reading and checking of config option values (see option_value.h).
#include "option_value.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include "cachet/suggest.h"
#include "ini_layout.h"

namespace cachet {

namespace {

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// from_chars rejects a leading '+', which people do write in config files.
std::string_view WithoutPlus(std::string_view text) {
  if (text.size() > 1 && text.front() == '+') text.remove_prefix(1);
  return text;
}

bool IsChoice(std::string_view value, std::string_view choices) {
  while (true) {
    std::size_t bar = choices.find('|');
    if (choices.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) return false;
    choices.remove_prefix(bar + 1);
  }
}

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string ExplainBadType(OptionType type, std::string_view value) {
  switch (type) {
    case OptionType::kInt:
      return ParseIntOption(value) ? "" : Quoted(value) + " is not an integer";
    case OptionType::kBool:
      return ParseBoolOption(value)
                 ? ""
                 : Quoted(value) + " is not a boolean (true/false, yes/no, on/off, 1/0)";
    case OptionType::kDouble:
      return ParseDoubleOption(value) ? "" : Quoted(value) + " is not a number";
    case OptionType::kString:
      return "";
    case OptionType::kList:
      // The reader keeps quotes as part of an item, as of a whole value.
      for (const std::string& item : SplitCommaList(value)) {
        if (item.size() >= 2 && (item.front() == '"' || item.front() == '\'') &&
            item.back() == item.front()) {
          return Quoted(item) + " is in quotes, which would be part of it; write it without them";
        }
      }
      return "";
  }
  return "";
}

std::string ExplainBadChoice(const OptionSpec& spec, std::string_view value) {
  std::vector<std::string> items;
  if (spec.type == OptionType::kList) {
    items = SplitCommaList(value);
  } else {
    items.emplace_back(value);
  }
  for (const std::string& item : items) {
    if (!IsChoice(item, spec.choices)) {
      return Quoted(item) + " is not one of " + spec.choices;
    }
  }
  return "";
}

}  // namespace

std::optional<std::int64_t> ParseIntOption(std::string_view text) {
  text = WithoutPlus(TrimBlanks(text));
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return {};
  return value;
}

std::optional<bool> ParseBoolOption(std::string_view text) {
  std::string word = Lowercase(TrimBlanks(text));
  if (word == "true" || word == "yes" || word == "on" || word == "1") return true;
  if (word == "false" || word == "no" || word == "off" || word == "0") return false;
  return {};
}

std::optional<double> ParseDoubleOption(std::string_view text) {
  text = WithoutPlus(TrimBlanks(text));
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return {};
  return value;
}

std::string ExplainBadValue(const OptionSpec& spec, std::string_view value) {
  std::string reason = ExplainBadType(spec.type, value);
  if (reason.empty() && spec.choices != nullptr) reason = ExplainBadChoice(spec, value);
  return reason;
}

std::string ClosestOptionName(std::string_view name, std::span<const OptionSpec> schema) {
  std::vector<std::string_view> names;
  names.reserve(schema.size());
  for (const OptionSpec& spec : schema) names.emplace_back(spec.name);
  return ClosestName(name, names);
}

}  // namespace cachet
