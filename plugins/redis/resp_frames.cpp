// The frame loop's out-of-line part: a parser failure's wording.
#include "resp_frames.h"

namespace cachet::redis {

Status ParserFailure(const RespParser& parser, std::string_view where) {
  std::string message =
      "redis " + std::string(where) + ": " + std::string(parser.error().message());
  return parser.error().code() == StatusCode::kTooLarge ? Status::TooLarge(message)
                                                        : Status::ProtocolError(message);
}

}  // namespace cachet::redis
