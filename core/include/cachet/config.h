// Config: cachet's INI configuration, read with Boost.Program_options.
//
// A file has a [cache] section (cache_options() below) and one section per store,
// named after its plugin ([memcached], [redis], ...), whose options the plugin
// declares as OptionSpecs. Command-line overrides "section.key=value" replace file
// values. Every value remembers where it came from, so an error names the file,
// the line and the key: "shop.conf:7: [memcached] srvers: unknown option".
//
// Validation against a schema checks types, choices and required keys and fills
// in defaults. Secret options (passwords) are masked whenever a Config is printed.
// A Config is a value: copy it freely; it is not synchronized for concurrent
// writes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet {

enum class OptionType : std::uint8_t {
  kString,
  kInt,     // signed 64-bit decimal
  kBool,    // true/false, yes/no, on/off, 1/0
  kDouble,
  kList,    // comma-separated strings
};
CACHET_EXPORT std::string_view OptionTypeName(OptionType t) noexcept;

// One option a section accepts. A plain aggregate of C strings, so plugins can
// declare their schema as a static array.
struct OptionSpec {
  const char* name;
  OptionType type;
  const char* default_value;  // nullptr: no default
  const char* help;
  bool required = false;
  bool secret = false;          // masked in output and logs
  const char* choices = nullptr;  // "a|b|c": the only values allowed
};

// A value and where it came from.
struct ConfigValue {
  std::string value;
  std::string source;  // a file path, "-o", or "default"
  int line = 0;        // 0 when not from a file
};

class CACHET_EXPORT ConfigSection {
 public:
  explicit ConfigSection(std::string name = {}) : name_(std::move(name)) {}

  const std::string& name() const noexcept { return name_; }
  bool has(std::string_view key) const;
  const ConfigValue* Find(std::string_view key) const;

  // Typed reads. REQUIRES: the section was validated against a schema declaring
  // `key` with that type (so the value exists and parses); otherwise the result
  // is the type's zero value.
  std::string GetString(std::string_view key) const;
  std::int64_t GetInt(std::string_view key) const;
  // GetInt, checked to lie in [low, high]; otherwise kConfigError naming where the
  // value came from: "file:line: [section] key = value: must be between low and high".
  Status GetIntInRange(std::string_view key, std::int64_t low, std::int64_t high,
                       std::int64_t* out) const;
  // kConfigError about `key`, naming where its value came from:
  // "file:line: [section] key = value: reason" (without " = value" when unset;
  // a secret option's value shows as "********").
  // For a plugin's or the core's own checks beyond the schema.
  Status ErrorAt(std::string_view key, std::string_view reason) const;
  bool GetBool(std::string_view key) const;
  double GetDouble(std::string_view key) const;
  std::vector<std::string> GetList(std::string_view key) const;
  // GetString and GetList of a file or folder option: a relative path written
  // in a config file is taken from that file's folder (so a config works from
  // any working directory); one given with -o, or a default, from the working
  // directory.
  std::string GetPath(std::string_view key) const;
  std::vector<std::string> GetPathList(std::string_view key) const;

  // Keys in name order.
  const std::map<std::string, ConfigValue, std::less<>>& values() const noexcept {
    return values_;
  }
  void Set(std::string key, ConfigValue value);

  // The schema this section was validated against; empty before validation.
  std::span<const OptionSpec> schema() const noexcept { return schema_; }

 private:
  friend class Config;
  std::string name_;
  std::map<std::string, ConfigValue, std::less<>> values_;
  std::span<const OptionSpec> schema_;
};

class CACHET_EXPORT Config {
 public:
  Config() = default;

  // Reads an INI file, then applies overrides ("section.key=value").
  // kConfigError naming the file (and line) for unreadable or malformed input.
  static Result<Config> LoadFile(const std::string& path,
                                 std::span<const std::string> overrides = {});
  // Same, from text; `source` names it in messages.
  static Result<Config> Parse(std::string_view text, std::string_view source,
                              std::span<const std::string> overrides = {});

  // Checks `section` against `schema` and fills in defaults. kConfigError naming
  // the source, line and key for an unknown key, a bad value or a missing
  // required one. A section absent from the file is validated as empty.
  Status Validate(std::string_view section, std::span<const OptionSpec> schema);

  // nullptr when the section is absent.
  const ConfigSection* section(std::string_view name) const;
  std::vector<std::string> SectionNames() const;

  // The effective settings as INI text, secrets shown as "********".
  std::string Render() const;

  // The file this config came from ("" when parsed from text).
  const std::string& path() const noexcept { return path_; }

 private:
  ConfigSection& MutableSection(std::string_view name);

  std::string path_;
  std::string source_;
  std::vector<ConfigSection> sections_;  // in file order
};

// The schema of the [cache] section: backend, namespace, serializer, compressor,
// compression_level, compress_threshold, compress_min_savings, default_ttl,
// flags_profile, log_level, plugin_path, metrics.
CACHET_EXPORT std::span<const OptionSpec> CacheOptionSpecs() noexcept;
// The schema of the [near_cache] section (cachet/near_cache.h).
CACHET_EXPORT std::span<const OptionSpec> NearCacheOptionSpecs() noexcept;

}  // namespace cachet
