// Status: the one error currency of cachet.
//
// Every operation that can fail returns a Status (or a Result<T>, see result.h).
// A Status is free on success: an ok Status holds no message and never allocates.
// Ordinary outcomes of a cache operation have their own codes and are not errors:
// kNotFound (a miss, or nothing to remove), kNotStored (add/replace precondition
// failed) and kExists (a CAS conflict). IsError() is true for everything else.
//
// Status is a value type; it is safe to copy between threads. No exception crosses
// a plugin boundary: components that call throwing libraries catch and convert.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cachet/export.h"

namespace cachet {

enum class StatusCode : std::uint8_t {
  kOk = 0,
  kNotFound,         // a miss; a key to remove or update was absent
  kNotStored,        // add on an existing key, replace/append on a missing one
  kExists,           // CAS conflict: the item changed since it was read
  kInvalidArgument,  // bad key, bad value type, bad call
  kUnsupported,      // the store cannot do this operation
  kTimeout,          // no answer within the deadline
  kUnavailable,      // server down, refused, marked dead
  kIoError,          // socket or file error
  kProtocolError,    // a reply that does not parse; the connection is dropped
  kCorruption,       // stored bytes that do not decode
  kAuthFailed,       // wrong credentials
  kTooLarge,         // value or key over a limit
  kConfigError,      // bad configuration
  kPluginError,      // a plugin that cannot be loaded or created
  kInternal,         // a bug in cachet
};

// Returns the snake_case name of a code ("not_found", "timeout", ...).
CACHET_EXPORT std::string_view StatusCodeName(StatusCode code) noexcept;

class [[nodiscard]] CACHET_EXPORT Status {
 public:
  Status() noexcept = default;  // ok

  static Status OK() noexcept { return Status(); }
  static Status NotFound(std::string_view msg = {}) { return {StatusCode::kNotFound, msg}; }
  static Status NotStored(std::string_view msg = {}) { return {StatusCode::kNotStored, msg}; }
  static Status Exists(std::string_view msg = {}) { return {StatusCode::kExists, msg}; }
  static Status InvalidArgument(std::string_view msg) { return {StatusCode::kInvalidArgument, msg}; }
  static Status Unsupported(std::string_view msg) { return {StatusCode::kUnsupported, msg}; }
  static Status Timeout(std::string_view msg) { return {StatusCode::kTimeout, msg}; }
  static Status Unavailable(std::string_view msg) { return {StatusCode::kUnavailable, msg}; }
  static Status IoError(std::string_view msg) { return {StatusCode::kIoError, msg}; }
  static Status ProtocolError(std::string_view msg) { return {StatusCode::kProtocolError, msg}; }
  static Status Corruption(std::string_view msg) { return {StatusCode::kCorruption, msg}; }
  static Status AuthFailed(std::string_view msg) { return {StatusCode::kAuthFailed, msg}; }
  static Status TooLarge(std::string_view msg) { return {StatusCode::kTooLarge, msg}; }
  static Status ConfigError(std::string_view msg) { return {StatusCode::kConfigError, msg}; }
  static Status PluginError(std::string_view msg) { return {StatusCode::kPluginError, msg}; }
  static Status Internal(std::string_view msg) { return {StatusCode::kInternal, msg}; }
  static Status FromCode(StatusCode code, std::string_view msg) { return {code, msg}; }

  bool ok() const noexcept { return code_ == StatusCode::kOk; }
  bool IsNotFound() const noexcept { return code_ == StatusCode::kNotFound; }
  bool IsNotStored() const noexcept { return code_ == StatusCode::kNotStored; }
  bool IsExists() const noexcept { return code_ == StatusCode::kExists; }
  bool IsInvalidArgument() const noexcept { return code_ == StatusCode::kInvalidArgument; }
  bool IsUnsupported() const noexcept { return code_ == StatusCode::kUnsupported; }
  bool IsTimeout() const noexcept { return code_ == StatusCode::kTimeout; }
  bool IsUnavailable() const noexcept { return code_ == StatusCode::kUnavailable; }
  bool IsIoError() const noexcept { return code_ == StatusCode::kIoError; }
  bool IsProtocolError() const noexcept { return code_ == StatusCode::kProtocolError; }
  bool IsCorruption() const noexcept { return code_ == StatusCode::kCorruption; }
  bool IsAuthFailed() const noexcept { return code_ == StatusCode::kAuthFailed; }
  bool IsTooLarge() const noexcept { return code_ == StatusCode::kTooLarge; }
  bool IsConfigError() const noexcept { return code_ == StatusCode::kConfigError; }
  bool IsPluginError() const noexcept { return code_ == StatusCode::kPluginError; }

  // True unless ok, or one of the ordinary outcomes not_found, not_stored, exists.
  bool IsError() const noexcept {
    return code_ > StatusCode::kExists;
  }

  StatusCode code() const noexcept { return code_; }
  std::string_view message() const noexcept { return message_; }

  // "ok", or "<code name>: <message>".
  std::string ToString() const;

  friend bool operator==(const Status& a, StatusCode c) noexcept { return a.code_ == c; }

 private:
  Status(StatusCode code, std::string_view msg) : code_(code), message_(msg) {}

  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace cachet
