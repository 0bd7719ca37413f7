// Config and ConfigSection: INI parsing with Boost.Program_options, overrides,
// validation against a schema, and rendering with secrets masked.
#include "cachet/config.h"

#include <algorithm>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "ini_layout.h"
#include "interned_schema.h"
#include "option_value.h"

namespace cachet {

namespace {

namespace po = boost::program_options;

constexpr std::string_view kOverrideSource = "-o";
constexpr std::string_view kDefaultSource = "default";
constexpr std::string_view kMask = "********";

// One "section.key" value as Program_options read it.
struct RawValue {
  std::string dotted_key;
  std::string value;
};

Result<std::vector<RawValue>> ReadWithProgramOptions(std::string_view text,
                                                     std::string_view source) {
  try {
    std::istringstream in{std::string(text)};
    // No option is declared: allow_unregistered hands back every section.key, and
    // the schema check happens in Validate, where it can name lines.
    po::options_description nothing_declared;
    po::parsed_options parsed = po::parse_config_file(in, nothing_declared, true);
    std::vector<RawValue> values;
    for (const po::option& option : parsed.options) {
      values.push_back({option.string_key, option.value.empty() ? "" : option.value.front()});
    }
    return values;
  } catch (const std::exception& e) {
    return Status::ConfigError(std::string(source) + ": " + e.what());
  }
}

// A command-line "section.key=value".
struct Override {
  std::string section;
  std::string key;
  std::string value;
};

// The INI reader keeps quotes as part of a value: namespace = "app:" would
// prefix keys with the quotes too. Refused rather than guessed at.
bool IsQuoted(std::string_view value) {
  return value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
         value.back() == value.front();
}

// The value is not quoted back: it may be a secret.
Status QuotedValueError(const std::string& where, std::string_view section, std::string_view key) {
  return Status::ConfigError(where + ": [" + std::string(section) + "] " + std::string(key) +
                             ": the value is in quotes, which would be part of it; write it "
                             "without them");
}

Result<Override> ParseOverride(std::string_view text) {
  std::size_t eq = text.find('=');
  std::string_view name = TrimBlanks(text.substr(0, eq));
  std::size_t dot = name.find('.');
  if (eq == std::string_view::npos || dot == std::string_view::npos || dot == 0 ||
      dot + 1 == name.size()) {
    return Status::ConfigError("-o '" + std::string(text) +
                               "': malformed override, expected section.key=value");
  }
  return Override{std::string(name.substr(0, dot)), std::string(name.substr(dot + 1)),
                  std::string(TrimBlanks(text.substr(eq + 1)))};
}

std::string Where(const ConfigValue& value) {
  if (value.line > 0) return value.source + ":" + std::to_string(value.line) + ": ";
  return value.source + ": ";
}

std::string Named(std::string_view section, std::string_view key) {
  return "[" + std::string(section) + "] " + std::string(key) + ": ";
}

const OptionSpec* FindSpec(std::span<const OptionSpec> schema, std::string_view key) {
  for (const OptionSpec& spec : schema) {
    if (key == spec.name) return &spec;
  }
  return nullptr;
}

// Before validation there is no schema to say what is secret; these names are
// masked anyway, because a secret must never be printed by accident.
bool LooksSecret(std::string_view key) {
  for (std::string_view word : {"password", "secret", "token", "credential"}) {
    if (key.find(word) != std::string_view::npos) return true;
  }
  return false;
}

bool IsSecret(const ConfigSection& section, std::string_view key) {
  const OptionSpec* spec = FindSpec(section.schema(), key);
  return spec != nullptr ? spec->secret : LooksSecret(key);
}

// An error message and the line it is about, so messages can be sorted by line.
struct LineError {
  int line;
  std::string message;
};

Status JoinErrors(std::vector<LineError> errors) {
  if (errors.empty()) return Status::OK();
  // Errors from the file first, in line order; overrides and missing options after.
  std::stable_sort(errors.begin(), errors.end(), [](const LineError& a, const LineError& b) {
    constexpr int kLast = std::numeric_limits<int>::max();
    return (a.line == 0 ? kLast : a.line) < (b.line == 0 ? kLast : b.line);
  });
  std::string text;
  for (const LineError& error : errors) {
    if (!text.empty()) text += '\n';
    text += error.message;
  }
  return Status::ConfigError(text);
}

}  // namespace

// ConfigSection --------------------------------------------------------------

bool ConfigSection::has(std::string_view key) const { return Find(key) != nullptr; }

const ConfigValue* ConfigSection::Find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

std::string ConfigSection::GetString(std::string_view key) const {
  const ConfigValue* value = Find(key);
  return value == nullptr ? std::string() : value->value;
}

std::int64_t ConfigSection::GetInt(std::string_view key) const {
  const ConfigValue* value = Find(key);
  return value == nullptr ? 0 : ParseIntOption(value->value).value_or(0);
}

Status ConfigSection::GetIntInRange(std::string_view key, std::int64_t low, std::int64_t high,
                                    std::int64_t* out) const {
  const std::int64_t value = GetInt(key);
  if (value < low || value > high) {
    return ErrorAt(key, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  }
  *out = value;
  return Status::OK();
}

Status ConfigSection::ErrorAt(std::string_view key, std::string_view reason) const {
  const ConfigValue* found = Find(key);
  // A default was set nowhere: no place is named, and its value is marked as the default's.
  const bool by_default = found != nullptr && found->source == kDefaultSource;
  std::string text = found == nullptr || by_default ? std::string() : Where(*found);
  text += "[" + name_ + "] " + std::string(key);
  if (found != nullptr && !(by_default && found->value.empty())) {
    // A secret's value never reaches an error message, which may end up in a log.
    bool masked = IsSecret(*this, key) && !found->value.empty();
    text += " = " + (masked ? std::string(kMask) : found->value);
    if (by_default) text += " (the default)";
  }
  return Status::ConfigError(text + ": " + std::string(reason));
}

bool ConfigSection::GetBool(std::string_view key) const {
  const ConfigValue* value = Find(key);
  return value != nullptr && ParseBoolOption(value->value).value_or(false);
}

double ConfigSection::GetDouble(std::string_view key) const {
  const ConfigValue* value = Find(key);
  return value == nullptr ? 0.0 : ParseDoubleOption(value->value).value_or(0.0);
}

std::vector<std::string> ConfigSection::GetList(std::string_view key) const {
  const ConfigValue* value = Find(key);
  return value == nullptr ? std::vector<std::string>() : SplitCommaList(value->value);
}

namespace {

// `path` as the option `from` gave it: a relative path written in a file is
// taken from that file's folder, one given with -o (or a default) from the
// working directory.
std::string ResolvedFrom(const ConfigValue& from, const std::string& path) {
  if (path.empty() || from.line == 0) return path;
  const std::filesystem::path given(path);
  if (given.is_absolute()) return path;
  return (std::filesystem::path(from.source).parent_path() / given).lexically_normal().string();
}

}  // namespace

std::string ConfigSection::GetPath(std::string_view key) const {
  const ConfigValue* value = Find(key);
  return value == nullptr ? std::string() : ResolvedFrom(*value, value->value);
}

std::vector<std::string> ConfigSection::GetPathList(std::string_view key) const {
  std::vector<std::string> paths = GetList(key);
  if (const ConfigValue* value = Find(key)) {
    for (std::string& path : paths) path = ResolvedFrom(*value, path);
  }
  return paths;
}

void ConfigSection::Set(std::string key, ConfigValue value) {
  values_.insert_or_assign(std::move(key), std::move(value));
}

// Config: reading --------------------------------------------------------------

Result<Config> Config::LoadFile(const std::string& path, std::span<const std::string> overrides) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::string reason = std::filesystem::exists(path, ec) ? "not a regular file" : "no such file";
    return Status::ConfigError(path + ": cannot read: " + reason);
  }
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.is_open() || in.bad()) {
    return Status::ConfigError(path + ": cannot read: " + std::strerror(errno));
  }
  Result<Config> config = Parse(text, path, overrides);
  if (config.ok()) config->path_ = path;
  return config;
}

Result<Config> Config::Parse(std::string_view text, std::string_view source,
                             std::span<const std::string> overrides) {
  Result<IniLayout> layout = ScanIniLayout(text, source);
  if (!layout.ok()) return layout.status();
  Result<std::vector<RawValue>> raw = ReadWithProgramOptions(text, source);
  if (!raw.ok()) return raw.status();
  if (raw->size() != layout->keys.size()) {
    return Status::Internal(std::string(source) + ": the line index and the parser disagree");
  }
  Config config;
  config.source_ = source;
  for (const std::string& name : layout->sections) config.MutableSection(name);
  for (std::size_t i = 0; i < raw->size(); ++i) {
    const IniKeyLine& where = layout->keys[i];
    if ((*raw)[i].dotted_key != where.section + "." + where.key) {
      return Status::Internal(std::string(source) + ":" + std::to_string(where.line) +
                              ": the line index and the parser disagree");
    }
    if (IsQuoted((*raw)[i].value)) {
      return QuotedValueError(std::string(source) + ":" + std::to_string(where.line),
                              where.section, where.key);
    }
    config.MutableSection(where.section)
        .Set(where.key, {std::move((*raw)[i].value), std::string(source), where.line});
  }
  for (const std::string& override_text : overrides) {
    Result<Override> parsed = ParseOverride(override_text);
    if (!parsed.ok()) return parsed.status();
    if (IsQuoted(parsed->value)) {
      return QuotedValueError(std::string(kOverrideSource), parsed->section, parsed->key);
    }
    config.MutableSection(parsed->section)
        .Set(std::move(parsed->key), {std::move(parsed->value), std::string(kOverrideSource), 0});
  }
  return config;
}

// Config: validation -----------------------------------------------------------

Status Config::Validate(std::string_view section_name, std::span<const OptionSpec> schema) {
  ConfigSection& section = MutableSection(section_name);
  section.schema_ = InternSchema(schema);
  std::vector<LineError> errors;
  for (const auto& [key, value] : section.values_) {
    const OptionSpec* spec = FindSpec(schema, key);
    std::string reason;
    if (spec == nullptr) {
      std::string suggestion = ClosestOptionName(key, schema);
      reason = "unknown option";
      if (!suggestion.empty()) reason += " (did you mean '" + suggestion + "'?)";
    } else if (spec->required && TrimBlanks(value.value).empty()) {
      reason = "required option is empty";
    } else {
      reason = ExplainBadValue(*spec, value.value);
    }
    if (!reason.empty()) {
      errors.push_back({value.line, Where(value) + Named(section_name, key) + reason});
    }
  }
  for (const OptionSpec& spec : schema) {
    if (section.has(spec.name)) continue;
    if (spec.required) {
      errors.push_back(
          {0, source_ + ": " + Named(section_name, spec.name) + "required option is missing"});
    } else if (spec.default_value != nullptr) {
      section.Set(spec.name, {spec.default_value, std::string(kDefaultSource), 0});
    }
  }
  return JoinErrors(std::move(errors));
}

// Config: access and output ------------------------------------------------------

const ConfigSection* Config::section(std::string_view name) const {
  for (const ConfigSection& candidate : sections_) {
    if (candidate.name() == name) return &candidate;
  }
  return nullptr;
}

std::vector<std::string> Config::SectionNames() const {
  std::vector<std::string> names;
  for (const ConfigSection& section : sections_) names.push_back(section.name());
  return names;
}

std::string Config::Render() const {
  std::string text;
  for (const ConfigSection& section : sections_) {
    if (!text.empty()) text += '\n';
    text += "[" + section.name() + "]\n";
    for (const auto& [key, value] : section.values()) {
      bool masked = IsSecret(section, key) && !value.value.empty();
      text += key + " = " + (masked ? std::string(kMask) : value.value) + "\n";
    }
  }
  return text;
}

ConfigSection& Config::MutableSection(std::string_view name) {
  for (ConfigSection& candidate : sections_) {
    if (candidate.name() == name) return candidate;
  }
  return sections_.emplace_back(std::string(name));
}

}  // namespace cachet
