// Result<T> and Lookup<T>: values that may carry a Status instead.
//
// Result<T> is a value or an error Status (never an ok Status without a value).
// Lookup<T> is what a read returns, one of exactly three things: a hit with its
// value, a miss, or an error. A miss is not an error and an error is never a miss:
// a server that is down answers error(unavailable), not miss.
#pragma once

#include <cassert>
#include <optional>
#include <utility>

#include "cachet/status.h"

namespace cachet {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "an ok Result needs a value");
    if (status_.ok()) status_ = Status::Internal("ok Result without a value");
  }

  bool ok() const noexcept { return status_.ok(); }
  const Status& status() const noexcept { return status_; }

  // REQUIRES: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

template <class T>
class [[nodiscard]] Lookup {
 public:
  static Lookup Hit(T value) { return Lookup(std::in_place, std::move(value)); }
  static Lookup Miss() { return Lookup(Status::NotFound(), std::nullopt); }
  // A not_found status is a miss; any other non-ok status is an error.
  static Lookup FromStatus(Status status) {
    assert(!status.ok());
    return Lookup(std::move(status), std::nullopt);
  }

  bool hit() const noexcept { return status_.ok(); }
  bool miss() const noexcept { return status_.IsNotFound(); }
  bool error() const noexcept { return !hit() && !miss(); }

  // ok on a hit, not_found on a miss, the error otherwise.
  const Status& status() const noexcept { return status_; }

  // REQUIRES: hit().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T* operator->() const { return &*value_; }
  const T& operator*() const& { return *value_; }

  // The value on a hit, `fallback` otherwise.
  T value_or(T fallback) const& { return hit() ? *value_ : std::move(fallback); }

 private:
  Lookup(Status status, std::optional<T> value)
      : status_(std::move(status)), value_(std::move(value)) {}
  // A hit built in place: one move of the value.
  Lookup(std::in_place_t, T&& value) : value_(std::in_place, std::move(value)) {}

  Status status_;
  std::optional<T> value_;
};

}  // namespace cachet
