// Status and Result: codes, predicates, formatting.
#include <catch2/catch.hpp>

#include "cachet/result.h"
#include "cachet/status.h"

using cachet::Lookup;
using cachet::Result;
using cachet::Status;
using cachet::StatusCode;

TEST_CASE("an ok Status is ok and carries no message", "[status]") {
  Status s;
  CHECK(s.ok());
  CHECK_FALSE(s.IsError());
  CHECK(s.message().empty());
  CHECK(s.ToString() == "ok");
}

TEST_CASE("ordinary outcomes are not errors, failures are", "[status]") {
  CHECK_FALSE(Status::NotFound().IsError());
  CHECK_FALSE(Status::NotStored().IsError());
  CHECK_FALSE(Status::Exists().IsError());
  CHECK(Status::Timeout("t").IsError());
  CHECK(Status::Unavailable("u").IsError());
  CHECK(Status::Corruption("c").IsError());
}

TEST_CASE("ToString names the code and the message", "[status]") {
  Status s = Status::Timeout("memcached 127.0.0.1:11211: no reply in 1000 ms");
  CHECK(s.IsTimeout());
  CHECK(s.code() == StatusCode::kTimeout);
  CHECK(s.ToString() == "timeout: memcached 127.0.0.1:11211: no reply in 1000 ms");
}

TEST_CASE("Lookup tells hit, miss and error apart", "[status]") {
  auto hit = Lookup<int>::Hit(3);
  auto miss = Lookup<int>::Miss();
  auto err = Lookup<int>::FromStatus(Status::Unavailable("down"));
  CHECK((hit.hit() && !hit.miss() && !hit.error() && *hit == 3));
  CHECK((!miss.hit() && miss.miss() && !miss.error()));
  CHECK((!err.hit() && !err.miss() && err.error() && err.status().IsUnavailable()));
  CHECK(miss.value_or(7) == 7);
}

TEST_CASE("Result holds a value or an error", "[status]") {
  Result<int> ok(5);
  Result<int> bad(Status::InvalidArgument("no"));
  CHECK((ok.ok() && *ok == 5));
  CHECK((!bad.ok() && bad.status().IsInvalidArgument()));
}
