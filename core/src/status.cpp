// Status names and formatting.
#include "cachet/status.h"

#include <cstring>
#include <iterator>
#include <new>

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

// Indexed by the code's value; the kOk entry is never pointed to.
const Status::State Status::kShared[] = {
    {0, StatusCode::kOk},           {0, StatusCode::kNotFound},
    {0, StatusCode::kNotStored},    {0, StatusCode::kExists},
    {0, StatusCode::kInvalidArgument}, {0, StatusCode::kUnsupported},
    {0, StatusCode::kTimeout},      {0, StatusCode::kUnavailable},
    {0, StatusCode::kIoError},      {0, StatusCode::kProtocolError},
    {0, StatusCode::kCorruption},   {0, StatusCode::kAuthFailed},
    {0, StatusCode::kTooLarge},     {0, StatusCode::kConfigError},
    {0, StatusCode::kPluginError},  {0, StatusCode::kInternal},
};

const Status::State* Status::Allocate(StatusCode code, std::string_view msg) {
  static_assert(std::size(kShared) == static_cast<std::size_t>(StatusCode::kInternal) + 1,
                "one shared State per code");
  // One block: the State, then the message's bytes (State is trivially destructible).
  char* block = new char[sizeof(State) + msg.size()];
  const State* state = new (block) State{msg.size(), code};
  std::memcpy(block + sizeof(State), msg.data(), msg.size());
  return state;
}

void Status::Free(const State* state) noexcept { delete[] reinterpret_cast<const char*>(state); }

std::string Status::ToString() const {
  std::string out(StatusCodeName(code()));
  if (!message().empty()) {
    out += ": ";
    out += message();
  }
  return out;
}

}  // namespace cachet
