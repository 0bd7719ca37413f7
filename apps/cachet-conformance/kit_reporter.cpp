// The "cachet" Catch reporter: one line per failing or skipped case, then
// "N cases, M passed, K skipped". A failing line names the case and its first
// failed assertion ("file:line: CHECK( expr ) with a == b"), cut to one short line
// so a megabyte value in an expansion stays readable.
// The reporter and listener interfaces are only declared with this set.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>

#include "suite_context.h"

namespace cachet::conformance {

namespace {

constexpr std::size_t kMaxDetail = 240;

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (text.size() > kMaxDetail) text = text.substr(0, kMaxDetail) + "...";
  return text;
}

std::string Describe(const Catch::AssertionStats& stats) {
  const Catch::AssertionResult& result = stats.assertionResult;
  const Catch::SourceLineInfo where = result.getSourceInfo();
  std::string file = where.file;
  file = file.substr(file.find_last_of('/') + 1);
  std::string detail = file + ":" + std::to_string(where.line) + ": ";
  if (result.hasExpression()) {
    detail += result.getExpressionInMacro();
    if (result.hasExpandedExpression()) detail += " with " + result.getExpandedExpression();
  }
  if (result.hasMessage()) detail += (result.hasExpression() ? ": " : "") + result.getMessage();
  for (const Catch::MessageInfo& info : stats.infoMessages) detail += " [" + info.message + "]";
  return OneLine(std::move(detail));
}

class KitReporter final : public Catch::StreamingReporterBase<KitReporter> {
 public:
  using StreamingReporterBase::StreamingReporterBase;

  static std::string getDescription() { return "cachet-conformance: one line per failing case"; }

  void assertionStarting(const Catch::AssertionInfo&) override {}

  bool assertionEnded(const Catch::AssertionStats& stats) override {
    if (!stats.assertionResult.isOk() && first_failure_.empty()) first_failure_ = Describe(stats);
    return true;
  }

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const std::string& name = stats.testInfo.name;
    ++cases_;
    CountCase();
    if (stats.totals.assertions.failed > 0) {
      stream << "failed: " << name << ": " << first_failure_ << '\n';
    } else if (auto reason = SkipReason(name)) {
      stream << "skipped: " << name << ": " << *reason << '\n';
      ++skipped_;
    } else {
      ++passed_;
    }
    stream.flush();
    first_failure_.clear();
    StreamingReporterBase::testCaseEnded(stats);
  }

  void testRunEnded(const Catch::TestRunStats& stats) override {
    stream << cases_ << " cases, " << passed_ << " passed, " << skipped_ << " skipped\n";
    StreamingReporterBase::testRunEnded(stats);
  }

 private:
  std::string first_failure_;
  std::size_t cases_ = 0;
  std::size_t passed_ = 0;
  std::size_t skipped_ = 0;
};

}  // namespace

CATCH_REGISTER_REPORTER("cachet", KitReporter)

}  // namespace cachet::conformance
