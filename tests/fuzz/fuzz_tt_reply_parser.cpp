// libFuzzer target for the Tokyo Tyrant reply parser: any bytes, any reply
// shape, fed whole and then split, must end in need-more, one reply inside the
// input, or a protocol_error, and both feedings must agree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tt_reply_parser.h"

namespace tt = cachet::tokyotyrant;

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first byte picks the shape, the second where to split the rest.
  const auto shape = static_cast<tt::ReplyShape>(data[0] % 10);
  const std::string_view bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::size_t split = bytes.empty() ? 0 : data[1] % (bytes.size() + 1);

  tt::ReplyParser whole;
  whole.Start(shape);
  const tt::ParseState whole_state = whole.Parse(bytes);
  if (whole_state == tt::ParseState::kDone) {
    Check(whole.consumed() <= bytes.size());
    for (const auto& field : whole.reply().fields) {
      Check(std::size_t{field.offset} + field.size <= whole.consumed());
    }
  }
  // Bytes that do not frame are a protocol error; a size or count over what
  // cachet reads, too_large.
  if (whole_state == tt::ParseState::kError) {
    Check(whole.error().IsProtocolError() || whole.error().IsTooLarge());
  }

  tt::ReplyParser pieces;
  pieces.Start(shape);
  tt::ParseState state = pieces.Parse(bytes.substr(0, split));
  if (state == tt::ParseState::kNeedMore) state = pieces.Parse(bytes);
  Check(state == whole_state);
  if (state == tt::ParseState::kDone) {
    Check(pieces.consumed() == whole.consumed());
    Check(pieces.reply().fields.size() == whole.reply().fields.size());
  }
  return 0;
}
