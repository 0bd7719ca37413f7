// The store under test and the skipped cases.
#include "suite_context.h"

#include <catch2/catch.hpp>
#include <map>
#include <utility>

namespace cachet::conformance {

namespace {

struct Suite {
  std::unique_ptr<Cache> cache;
  SuiteSettings settings;
  std::map<std::string, std::string, std::less<>> skipped;  // case name -> reason
  std::size_t cases_run = 0;
};

Suite& TheSuite() {
  static Suite* suite = new Suite();  // never destroyed: the reporter reads it until exit
  return *suite;
}

}  // namespace

void SetSuite(std::unique_ptr<Cache> cache, SuiteSettings settings) {
  TheSuite().cache = std::move(cache);
  TheSuite().settings = std::move(settings);
}

void CloseSuite() { TheSuite().cache.reset(); }

Cache& SharedCache() {
  if (!TheSuite().cache) FAIL("no store: SetSuite() was not called");
  return *TheSuite().cache;
}

const SuiteSettings& Settings() { return TheSuite().settings; }

void SkipCase(std::string reason) {
  TheSuite().skipped[Catch::getResultCapture().getCurrentTestName()] = std::move(reason);
}

std::optional<std::string> SkipReason(std::string_view name) {
  auto it = TheSuite().skipped.find(name);
  if (it == TheSuite().skipped.end()) return std::nullopt;
  return it->second;
}

void CountCase() { ++TheSuite().cases_run; }

std::size_t CasesRun() { return TheSuite().cases_run; }

}  // namespace cachet::conformance
