// Status names and formatting.
#include "cachet/status.h"

namespace cachet {

std::string_view StatusCodeName(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kNotStored: return "not_stored";
    case StatusCode::kExists: return "exists";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kTimeout: return "timeout";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kProtocolError: return "protocol_error";
    case StatusCode::kCorruption: return "corruption";
    case StatusCode::kAuthFailed: return "auth_failed";
    case StatusCode::kTooLarge: return "too_large";
    case StatusCode::kConfigError: return "config_error";
    case StatusCode::kPluginError: return "plugin_error";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  std::string out(StatusCodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace cachet
