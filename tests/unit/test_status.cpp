// Status and Result: codes, predicates, formatting.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <utility>

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

TEST_CASE("a Status is one pointer, null when ok", "[status]") {
  static_assert(sizeof(Status) == sizeof(void*));
  Status ok;
  void* bits = nullptr;
  std::memcpy(&bits, &ok, sizeof(bits));
  CHECK(bits == nullptr);
  Status miss = Status::NotFound();
  std::memcpy(&bits, &miss, sizeof(bits));
  CHECK(bits != nullptr);
}

TEST_CASE("every code round-trips, with and without a message", "[status]") {
  for (int c = 1; c <= static_cast<int>(StatusCode::kInternal); ++c) {
    const auto code = static_cast<StatusCode>(c);
    INFO(cachet::StatusCodeName(code));
    const Status plain = Status::FromCode(code, {});
    CHECK(plain.code() == code);
    CHECK_FALSE(plain.ok());
    CHECK(plain.message().empty());
    const Status told = Status::FromCode(code, "why");
    CHECK(told.code() == code);
    CHECK(told.message() == "why");
    CHECK(told == code);
  }
  // An ok Status has no message, whatever FromCode was given.
  const Status ok = Status::FromCode(StatusCode::kOk, "ignored");
  CHECK(ok.ok());
  CHECK(ok.message().empty());
}

TEST_CASE("a copy owns its message, a move leaves the source ok", "[status]") {
  Status original = Status::Corruption(std::string(100, 'x'));
  Status copy = original;
  CHECK(copy.IsCorruption());
  CHECK(copy.message() == original.message());
  CHECK(copy.message().data() != original.message().data());
  original = Status::Timeout("late");
  CHECK(copy.message() == std::string(100, 'x'));  // the copy outlives what it was made from

  Status moved = std::move(copy);
  CHECK(moved.message() == std::string(100, 'x'));
  CHECK(copy.ok());  // NOLINT(bugprone-use-after-move): moved-from is documented as ok
  CHECK(copy.message().empty());

  Status assigned = Status::NotFound();
  assigned = moved;  // copy-assign over a shared, message-less State
  CHECK(assigned.message() == std::string(100, 'x'));
  const Status& same = assigned;
  assigned = same;  // self-assignment keeps it
  CHECK(assigned.message() == std::string(100, 'x'));
  assigned = Status::NotFound();  // and back to a shared one, freeing the copy
  CHECK(assigned.IsNotFound());
  CHECK(assigned.message().empty());
  Status& self = moved;
  moved = std::move(self);  // self-move keeps it too
  CHECK(moved.message() == std::string(100, 'x'));
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
