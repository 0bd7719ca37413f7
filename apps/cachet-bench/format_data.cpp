// --format json and csv: one record per scenario and target, every field of a
// Figure, for scripts and spreadsheets; json puts the records in "rows" beside
// the run's settings, versions and machine.
#include <nlohmann/json.hpp>

#include "formatters.h"

namespace cachet::bench {
namespace {

nlohmann::ordered_json FigureJson(const ScenarioFigures& s, const Figure& f) {
  nlohmann::ordered_json j;
  j["scenario"] = s.scenario;
  j["target"] = f.target;
  j["ran"] = f.ran;
  j["skipped"] = f.skipped;
  j["rate"] = f.rate;
  j["rate_min"] = f.rate_min;
  j["rate_max"] = f.rate_max;
  j["spread_percent"] = SpreadPercent(f);
  j["cpu_ns_per_op"] = f.cpu_ns_per_op;
  j["iterations"] = f.iterations;
  j["failures"] = f.failures;
  j["p50_ns"] = f.p50_ns;
  j["p90_ns"] = f.p90_ns;
  j["p99_ns"] = f.p99_ns;
  j["p999_ns"] = f.p999_ns;
  j["max_ns"] = f.max_ns;
  j["note"] = f.note;
  return j;
}

nlohmann::ordered_json SettingsJson(const RunInfo& info) {
  nlohmann::ordered_json j;
  j["configs"] = info.configs;
  j["overrides"] = info.overrides;
  j["scenarios"] = info.scenarios;
  j["duration_seconds"] = info.duration_seconds;
  j["ops"] = info.ops;
  j["value_size"] = info.value_size;
  j["slice_ms"] = info.slice_ms;
  j["keys"] = info.keys;
  j["split_keys"] = info.split_keys;
  j["cache_per_thread"] = info.cache_per_thread;
  j["threads"] = info.threads;
  j["repeat"] = info.repeat;
  return j;
}

nlohmann::ordered_json VersionsJson(const RunInfo& info) {
  nlohmann::ordered_json j;
  j["cachet"] = info.cachet_version;
  j["compiler"] = info.compiler;
  for (const auto& [name, version] : info.peers) j[name] = version;
  return j;
}

// RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

std::string Number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

}  // namespace

std::string FormatJson(const RunInfo& info, const std::vector<ScenarioFigures>& results) {
  nlohmann::ordered_json all;
  all["settings"] = SettingsJson(info);
  all["versions"] = VersionsJson(info);
  all["machine"] = {{"cores", info.cores}, {"load_average", info.load_average}};
  if (info.line_round_trip_ns > 0) all["machine"]["line_round_trip_ns"] = info.line_round_trip_ns;
  all["failed"] = AnyColumnFailed(results);
  nlohmann::ordered_json& rows = all["rows"] = nlohmann::ordered_json::array();
  for (const ScenarioFigures& s : results) {
    for (const Figure& f : s.figures) rows.push_back(FigureJson(s, f));
  }
  // Invalid UTF-8 in a note (a server's reply) is replaced, never thrown.
  return all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
}

std::string FormatCsv(const std::vector<ScenarioFigures>& results) {
  std::string out =
      "scenario,target,ran,rate,rate_min,rate_max,spread_percent,cpu_ns_per_op,iterations,"
      "failures,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,note\r\n";
  for (const ScenarioFigures& s : results) {
    for (const Figure& f : s.figures) {
      out += CsvField(s.scenario) + ',' + CsvField(f.target) + ',' + (f.ran ? "1" : "0") + ',' +
             Number(f.rate) + ',' + Number(f.rate_min) + ',' + Number(f.rate_max) + ',' +
             Number(SpreadPercent(f)) + ',' + Number(f.cpu_ns_per_op) + ',' +
             std::to_string(f.iterations) + ',' + std::to_string(f.failures) + ',' +
             Number(f.p50_ns) + ',' + Number(f.p90_ns) + ',' + Number(f.p99_ns) + ',' +
             Number(f.p999_ns) + ',' + Number(f.max_ns) + ',' + CsvField(f.note) + "\r\n";
    }
  }
  return out;
}

}  // namespace cachet::bench
