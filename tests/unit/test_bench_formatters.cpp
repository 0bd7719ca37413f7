// cachet-bench's formatters (the cmpthese layout itself is checked in
// tests/integration/cli/test_bench_report.cpp): the table format, json, csv and the SVG chart.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmpthese.h"
#include "formatters.h"
#include "svg_chart.h"

namespace cb = cachet::bench;

namespace {

cb::Figure Ran(std::string target, double rate) {
  cb::Figure f;
  f.target = std::move(target);
  f.ran = true;
  f.rate = rate;
  f.rate_min = rate * 0.9;
  f.rate_max = rate * 1.1;
  f.cpu_ns_per_op = 1500;
  f.iterations = 1000;
  return f;
}

cb::Figure Skipped(std::string target, std::string note) {
  cb::Figure f;
  f.target = std::move(target);
  f.skipped = true;
  f.note = std::move(note);
  return f;
}

cb::Figure CouldNotConnect(std::string target) {
  cb::Figure f;
  f.target = std::move(target);
  f.note = "cannot connect: unavailable: connection refused";
  return f;
}

cb::RunInfo SampleInfo() {
  cb::RunInfo info;
  info.configs = {"config/default.conf"};
  info.scenarios = {"get", "incr"};
  info.duration_seconds = 1;
  info.value_size = 10;
  info.slice_ms = 100;
  info.keys = 100;
  info.threads = 2;
  info.repeat = 3;
  info.cachet_version = "9.9.9";
  info.compiler = "gcc";
  info.peers = {{"libmemcached", "1.0.18"}};
  info.cores = 8;
  info.load_average = {0.5, 0.25, 0.125};
  return info;
}

std::vector<cb::ScenarioFigures> Sample() {
  return {{"get", "get stored keys", {Ran("a<b", 200), Ran("c", 100), Skipped("d", "skipped: x")}},
          {"incr", "incr", {Ran("a<b", 50), Skipped("c", "skipped: no, really"), Ran("d", 25)}}};
}

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A small well-formedness check: every element closes in order, nothing is left
// open, and no raw '<' or '&' appears in text.
bool WellFormed(const std::string& xml) {
  std::vector<std::string> open;
  std::size_t at = xml.find("?>");
  for (std::size_t guard = 0; guard < xml.size() && at != std::string::npos; ++guard) {
    const std::size_t lt = xml.find('<', at);
    if (lt == std::string::npos) break;
    const std::string text = xml.substr(at, lt - at);
    if (text.find('&') != std::string::npos && text.find("&lt;") == std::string::npos &&
        text.find("&amp;") == std::string::npos && text.find("&gt;") == std::string::npos) {
      return false;
    }
    const std::size_t gt = xml.find('>', lt);
    if (gt == std::string::npos) return false;
    std::string tag = xml.substr(lt + 1, gt - lt - 1);
    at = gt + 1;
    if (tag.back() == '/') continue;
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
      continue;
    }
    open.push_back(tag.substr(0, tag.find(' ')));
  }
  return open.empty();
}

}  // namespace

TEST_CASE("cmpthese rows go slowest first with percentages against each column") {
  const std::string table = cb::FormatCmpthese({{"fast", 200}, {"slow", 100}});
  const auto slow = table.find("\nslow");
  const auto fast = table.find("\nfast");
  REQUIRE(slow != std::string::npos);
  REQUIRE(fast != std::string::npos);
  CHECK(slow < fast);
  CHECK(table.find("-50%") != std::string::npos);
  CHECK(table.find("100%") != std::string::npos);
  CHECK(Count(table, "--") == 2);
  CHECK(Count(table, "\n") == 3);
}

TEST_CASE("the table format shows spread, CPU per op and why a column has no rate") {
  const std::string text = cb::FormatScenarioTable(Sample()[0]);
  CHECK(text.find("==== get: get stored keys ====") == 0);
  CHECK(text.find("+-10.0%") != std::string::npos);
  CHECK(text.find("1.5 us/op") != std::string::npos);
  CHECK(text.find("\n  d    no rate: skipped: x\n") != std::string::npos);
}

TEST_CASE("json output is the run's settings, versions and machine, and one row per figure") {
  const auto doc = nlohmann::json::parse(cb::FormatJson(SampleInfo(), Sample()));
  REQUIRE(doc.is_object());
  CHECK(doc["settings"]["configs"][0] == "config/default.conf");
  CHECK(doc["settings"]["scenarios"].size() == 2);
  CHECK(doc["settings"]["threads"] == 2);
  CHECK(doc["settings"]["repeat"] == 3);
  CHECK(doc["versions"]["cachet"] == "9.9.9");
  CHECK(doc["versions"]["libmemcached"] == "1.0.18");
  CHECK(doc["machine"]["cores"] == 8);
  CHECK(doc["machine"]["load_average"][2] == 0.125);
  CHECK(doc["failed"] == false);
  const auto& rows = doc["rows"];
  REQUIRE(rows.size() == 6);
  CHECK(rows[0]["scenario"] == "get");
  CHECK(rows[0]["target"] == "a<b");
  CHECK(rows[0]["rate"] == 200.0);
  CHECK(rows[2]["ran"] == false);
  CHECK(rows[2]["skipped"] == true);
  CHECK(rows[2]["note"] == "skipped: x");
  CHECK(rows[1]["cpu_ns_per_op"] == 1500.0);
}

TEST_CASE("a skipped cell is not a failure, a column that could not connect or failed is") {
  CHECK_FALSE(cb::AnyColumnFailed(Sample()));
  std::vector<cb::ScenarioFigures> unreachable = Sample();
  unreachable[1].figures.push_back(CouldNotConnect("e"));
  CHECK(cb::AnyColumnFailed(unreachable));
  std::vector<cb::ScenarioFigures> failing = Sample();
  failing[0].figures[1].failures = 1;
  CHECK(cb::AnyColumnFailed(failing));
  const auto doc = nlohmann::json::parse(cb::FormatJson(SampleInfo(), unreachable));
  CHECK(doc["failed"] == true);
  CHECK(doc["rows"][6]["skipped"] == false);
}

TEST_CASE("csv output quotes fields with commas") {
  const std::string csv = cb::FormatCsv(Sample());
  CHECK(Count(csv, "\r\n") == 7);
  CHECK(csv.rfind("scenario,target,ran,rate,", 0) == 0);
  CHECK(csv.find("\"skipped: no, really\"") != std::string::npos);
  CHECK(csv.find("get,a<b,1,200,") != std::string::npos);
}

TEST_CASE("the svg chart is well formed with one bar per measured entry") {
  const std::string svg = cb::RenderSvgChart(Sample(), "title & more");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(WellFormed(svg));
  CHECK(Count(svg, "<rect class=\"bar\"") == 4);
  CHECK(Count(svg, "class=\"na\"") == 2);
  CHECK(Count(svg, "class=\"group\"") == 2);
  CHECK(svg.find("a&lt;b") != std::string::npos);
  CHECK(svg.find("a<b") == std::string::npos);
  CHECK(svg.find("title &amp; more") != std::string::npos);
}

TEST_CASE("the well-formedness check itself rejects broken documents") {
  CHECK_FALSE(WellFormed("<?xml?><svg><g></svg>"));
  CHECK(WellFormed("<?xml?><svg><g/><text>x</text></svg>"));
}

TEST_CASE("short rates") {
  CHECK(cb::ShortRate(950) == "950");
  CHECK(cb::ShortRate(12345) == "12.3k");
  CHECK(cb::ShortRate(4560000) == "4.56M");
}
