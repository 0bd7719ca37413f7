// Logging: the one core logger and its level names.
#include <catch2/catch.hpp>

#include "cachet/log.h"

TEST_CASE("the core logger is one logger named cachet", "[log]") {
  auto logger = cachet::Logger();
  REQUIRE(logger != nullptr);
  CHECK(logger->name() == "cachet");
  CHECK(cachet::Logger() == logger);
}

TEST_CASE("SetLogLevel takes the documented names and refuses others", "[log]") {
  REQUIRE(cachet::SetLogLevel("debug").ok());
  CHECK(cachet::Logger()->level() == spdlog::level::debug);
  REQUIRE(cachet::SetLogLevel("off").ok());
  CHECK(cachet::Logger()->level() == spdlog::level::off);
  const cachet::Status s = cachet::SetLogLevel("loud");
  CHECK(s.IsConfigError());
  CHECK(s.message().find("loud") != std::string_view::npos);
  CHECK(cachet::Logger()->level() == spdlog::level::off);  // unchanged
  REQUIRE(cachet::SetLogLevel("info").ok());
}
