// DirectBulk: routing a large bulk string by its header and receiving it direct.
#include "direct_bulk.h"

#include <charconv>
#include <cstring>
#include <string>
#include <system_error>

namespace cachet::redis {

bool BulkHeader(std::string_view input, const RespLimits& limits, std::size_t* data_offset,
                std::size_t* size) {
  if (input.size() < 4 || input[0] != '$') return false;
  // A length of at most 20 digits, then "\r\n".
  const std::size_t searched = std::min<std::size_t>(input.size(), 24);
  const void* found = std::memchr(input.data(), '\n', searched);
  if (found == nullptr) return false;
  const auto newline = static_cast<std::size_t>(static_cast<const char*>(found) - input.data());
  if (newline < 3 || input[newline - 1] != '\r') return false;
  const char* digits_end = input.data() + newline - 1;
  auto [end, ec] = std::from_chars(input.data() + 1, digits_end, *size);
  if (ec != std::errc() || end != digits_end || *size > limits.max_bulk_length) return false;
  *data_offset = newline + 1;
  return true;
}

bool DirectBulk::Start(net::ReadBuffer& buffer, RespParser& parser, Operation& op,
                       std::string_view where) {
  std::size_t offset = 0;
  std::size_t size = 0;
  if (!BulkHeader(buffer.data(), parser.limits(), &offset, &size) ||
      !net::DirectValue::Worthwhile(buffer, offset, size)) {
    return false;
  }
  parser.Reset();
  op.result.flags = 0;
  op.result.cas = 0;
  op.status =
      Status::IoError("redis " + std::string(where) + ": the connection failed inside a value");
  value_.Start(buffer, offset, size, &op.result.value);
  op_ = &op;
  return true;
}

Status DirectBulk::ContinueActive(net::ReadBuffer& buffer, std::string_view where,
                                  std::size_t* answered) {
  bool done = false;
  Status s = value_.Continue(buffer, &done);
  if (!s.ok())
    return Status::ProtocolError("redis " + std::string(where) + ": " + std::string(s.message()));
  if (done) {
    op_->status = Status::OK();
    ++*answered;
  }
  return Status::OK();
}

}  // namespace cachet::redis
