// Status: the one error currency of cachet.
//
// Every operation that can fail returns a Status (or a Result<T>, see result.h).
// Ordinary outcomes of a cache operation have their own codes and are not errors:
// kNotFound (a miss, or nothing to remove), kNotStored (add/replace precondition
// failed) and kExists (a CAS conflict). IsError() is true for everything else.
//
// A Status is one pointer, null when ok (as leveldb's): returning, moving and
// testing one costs what a pointer does. Any other Status points to its code
// and message, which never change once made. Without a message it points to a
// shared, static block for its code, so a miss allocates nothing; with one it
// owns a heap block, which a copy duplicates. A moved-from Status is ok.
//
// Status is a value type; it is safe to copy between threads. No exception crosses
// a plugin boundary: components that call throwing libraries catch and convert.
#pragma once

#include <cstddef>
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
  ~Status() { Release(); }

  Status(const Status& other) : state_(CopyOf(other.state_)) {}
  Status& operator=(const Status& other) {
    if (state_ != other.state_) {
      const State* copy = CopyOf(other.state_);
      Release();
      state_ = copy;
    }
    return *this;
  }
  Status(Status&& other) noexcept : state_(other.state_) { other.state_ = nullptr; }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      Release();
      state_ = other.state_;
      other.state_ = nullptr;
    }
    return *this;
  }

  static Status OK() noexcept { return Status(); }
  static Status NotFound(std::string_view msg = {}) { return {StatusCode::kNotFound, msg}; }
  static Status NotStored(std::string_view msg = {}) { return {StatusCode::kNotStored, msg}; }
  static Status Exists(std::string_view msg = {}) { return {StatusCode::kExists, msg}; }
  static Status InvalidArgument(std::string_view msg) {
    return {StatusCode::kInvalidArgument, msg};
  }
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
  // kOk makes an ok Status, whatever `msg` says: an ok Status has no message.
  static Status FromCode(StatusCode code, std::string_view msg) { return {code, msg}; }

  bool ok() const noexcept { return state_ == nullptr; }
  bool IsNotFound() const noexcept { return code() == StatusCode::kNotFound; }
  bool IsNotStored() const noexcept { return code() == StatusCode::kNotStored; }
  bool IsExists() const noexcept { return code() == StatusCode::kExists; }
  bool IsInvalidArgument() const noexcept { return code() == StatusCode::kInvalidArgument; }
  bool IsUnsupported() const noexcept { return code() == StatusCode::kUnsupported; }
  bool IsTimeout() const noexcept { return code() == StatusCode::kTimeout; }
  bool IsUnavailable() const noexcept { return code() == StatusCode::kUnavailable; }
  bool IsIoError() const noexcept { return code() == StatusCode::kIoError; }
  bool IsProtocolError() const noexcept { return code() == StatusCode::kProtocolError; }
  bool IsCorruption() const noexcept { return code() == StatusCode::kCorruption; }
  bool IsAuthFailed() const noexcept { return code() == StatusCode::kAuthFailed; }
  bool IsTooLarge() const noexcept { return code() == StatusCode::kTooLarge; }
  bool IsConfigError() const noexcept { return code() == StatusCode::kConfigError; }
  bool IsPluginError() const noexcept { return code() == StatusCode::kPluginError; }

  // True unless ok, or one of the ordinary outcomes not_found, not_stored, exists.
  bool IsError() const noexcept { return code() > StatusCode::kExists; }

  StatusCode code() const noexcept { return ok() ? StatusCode::kOk : state_->code; }
  std::string_view message() const noexcept {
    return ok() ? std::string_view() : std::string_view(state_->text(), state_->size);
  }

  // "ok", or "<code name>: <message>".
  std::string ToString() const;

  friend bool operator==(const Status& a, StatusCode c) noexcept { return a.code() == c; }

 private:
  // A failed Status's code and message, immutable once made. The message's
  // `size` bytes follow the State in the same block; a State without any is one
  // of the shared static ones (kShared), one with a message its Status's own.
  struct State {
    std::size_t size;
    StatusCode code;
    const char* text() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  };

  Status(StatusCode code, std::string_view msg)
      : state_(code == StatusCode::kOk ? nullptr
               : msg.empty()           ? &kShared[static_cast<std::size_t>(code)]
                                       : Allocate(code, msg)) {}

  // A heap State holding `msg`. REQUIRES: `msg` is not empty.
  static const State* Allocate(StatusCode code, std::string_view msg);
  // `state` itself if shared (or null), else a heap copy of it.
  static const State* CopyOf(const State* state) {
    if (state == nullptr || state->size == 0) return state;
    return Allocate(state->code, {state->text(), state->size});
  }
  static void Free(const State* state) noexcept;
  void Release() noexcept {
    if (state_ != nullptr && state_->size != 0) Free(state_);
  }

  // One message-less State per code, indexed by the code's value.
  static const State kShared[];

  const State* state_ = nullptr;  // null: ok
};

static_assert(sizeof(Status) == sizeof(void*), "a Status is one pointer");

}  // namespace cachet
