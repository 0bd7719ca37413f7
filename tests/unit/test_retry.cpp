// net::Attempts: a call's retries, counted against the policy and the call's
// deadline, with waits that grow and never run past the deadline.
#include <catch2/catch.hpp>
#include <chrono>

#include "cachet/net/retry.h"

namespace cachet::net {
namespace {

using std::chrono::milliseconds;

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

TEST_CASE("attempts stop at the policy's count, and giving up says how many", "[retry]") {
  Attempts attempts({3, milliseconds(0)}, Clock::now() + std::chrono::seconds(60));
  int tries = 0;
  while (attempts.Next()) ++tries;
  CHECK(tries == 3);
  CHECK(attempts.made() == 3);
  CHECK_FALSE(attempts.Next());  // spent stays spent
  const Status s = attempts.GiveUp("store: key k", Status::Unavailable("connect: refused"));
  INFO(s.ToString());
  CHECK(s.IsUnavailable());
  CHECK(s.message().find("store: key k: gave up after 3 attempts") != std::string_view::npos);
  CHECK(s.message().find("connect: refused") != std::string_view::npos);
}

TEST_CASE("a policy of no attempts still makes one", "[retry]") {
  Attempts attempts({0, milliseconds(0)}, Clock::now() + std::chrono::seconds(60));
  CHECK(attempts.Next());
  CHECK_FALSE(attempts.Next());
  CHECK(attempts.GiveUp("x", Status::Unavailable("y")).message().find("after 1 attempt;") !=
        std::string_view::npos);
}

TEST_CASE("no attempt begins past the deadline, and giving up then is a timeout", "[retry]") {
  Attempts attempts({100, milliseconds(0)}, Clock::now() - milliseconds(1));
  CHECK_FALSE(attempts.Next());
  CHECK(attempts.made() == 0);
  const Status s = attempts.GiveUp("store: key k", Status::Unavailable("connect: refused"));
  INFO(s.ToString());
  CHECK(s.IsTimeout());
  CHECK(s.message().find("no answer within the request timeout after 0 attempts") !=
        std::string_view::npos);
}

TEST_CASE("the wait before a retry grows with the attempts made", "[retry]") {
  Attempts attempts({5, milliseconds(20)}, Clock::now() + std::chrono::seconds(60));
  REQUIRE(attempts.Next());
  Clock::time_point start = Clock::now();
  attempts.Wait();
  CHECK(Since(start) >= milliseconds(20));  // 1 x the wait
  REQUIRE(attempts.Next());
  REQUIRE(attempts.Next());
  start = Clock::now();
  attempts.Wait();
  CHECK(Since(start) >= milliseconds(60));  // 3 x the wait
}

TEST_CASE("a wait never runs past the deadline, nor follows the last attempt", "[retry]") {
  // Ten seconds of wait against a deadline 100 ms away: the wait ends at the
  // deadline (the bound below is loose: it only tells a deadline from ten seconds).
  Attempts short_call({5, milliseconds(10000)}, Clock::now() + milliseconds(100));
  REQUIRE(short_call.Next());
  Clock::time_point start = Clock::now();
  short_call.Wait();
  CHECK(Since(start) < milliseconds(5000));
  CHECK_FALSE(short_call.Next());  // past the deadline now

  Attempts one({1, milliseconds(10000)}, Clock::now() + std::chrono::seconds(60));
  REQUIRE(one.Next());
  start = Clock::now();
  one.Wait();  // no attempt follows: nothing to wait for
  CHECK(Since(start) < milliseconds(5000));
}

TEST_CASE("the wait stops growing at ten times the first", "[retry]") {
  // After 30 attempts the next wait would be 30 x 100 ms uncapped; it is 10 x.
  Attempts attempts({40, milliseconds(100)}, Clock::now() + std::chrono::seconds(60));
  for (int i = 0; i < 30; ++i) REQUIRE(attempts.Next());
  const Clock::time_point start = Clock::now();
  attempts.Wait();
  CHECK(Since(start) >= milliseconds(1000));
  CHECK(Since(start) < milliseconds(2500));  // far from the 3 s of an uncapped wait
}

}  // namespace
}  // namespace cachet::net
