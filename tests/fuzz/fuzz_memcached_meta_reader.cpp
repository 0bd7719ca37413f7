// Fuzz target: memcached's meta reader (MetaBatch) as a single operation reads
// with it (MetaBatch::ForOne), on arbitrary replies split at arbitrary points.
//
// Whatever arrives, the reader must end in a decided state and never hand out
// a value that is not the answer to its command: after a protocol error the
// operation has that error; a hit's value is the data of the VA that opens the
// reply; an operation that got no answer has the exchange's error. A noreply
// command is read as in a batch (quiet, then MN). Out-of-bounds reads are
// ASan's to catch.
//
// Input: byte 0, the command (its kind in the low 3 bits, noreply in 0x08) and
// the number of cuts (high 3 bits); then a byte per cut (where the reply is
// split); the rest is the reply, where a byte from 0xe0 up stands for a piece
// of a meta reply (kPieces), so that whole replies are found quickly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "memcached_fuzz_replies.h"
#include "meta_batch.h"

namespace {

using cachet::Item;
using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::memcached::MetaBatch;
using cachet::memcached::ParserLimits;

constexpr ParserLimits kLimits{256, 1 << 20};
constexpr OpKind kKinds[] = {OpKind::kGet,  OpKind::kStore, OpKind::kRemove,
                             OpKind::kIncr, OpKind::kDecr,  OpKind::kTouch};

const std::string_view kPieces[] = {
    "VA ", "HD", "EN", "NS", "EX", "NF", "MN", " O0", " O1", " kk", " kother", " f7", " c99",
    " W", " Z", " X", " b", "\r\n", " ", "0", "1", "5", "20", "hello", "ERROR\r\n",
    "CLIENT_ERROR bad\r\n", "SERVER_ERROR out of memory\r\n", "VA 5 f7 c99 O0\r\nhello\r\n",
    "HD O0\r\n", "EN O0\r\n", "MN\r\n", "18446744073709551615", "\n", "VA 300 O0\r\n"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t cut_count = data[0] >> 5;
  if (size < 1 + cut_count) return 0;
  Operation op;
  op.kind = kKinds[(data[0] & 7) % std::size(kKinds)];
  op.key = "k";
  op.noreply = op.kind != OpKind::kGet && (data[0] & 0x08) != 0;
  op.status = Status::Internal("never decided");
  const std::string reply = cachet::memcached::fuzz::Expand(
      std::string_view(reinterpret_cast<const char*>(data) + 1 + cut_count, size - 1 - cut_count),
      kPieces);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < cut_count; ++i) {
    const std::size_t cut = reply.empty() ? 0 : data[1 + i] % (reply.size() + 1);
    if (cuts.empty() || cut >= cuts.back()) cuts.push_back(cut);
  }
  Item lent;
  lent.value = "left over";
  MetaBatch& reader = MetaBatch::ForOne(op, {}, &lent, kLimits);
  bool done = false;
  const Status stream = cachet::memcached::fuzz::Feed(reader, reply, cuts, &done);
  // Every end is decided: by a reply, by MN, or by the exchange's failure.
  if (op.status.code() == cachet::StatusCode::kInternal) std::abort();
  // After a protocol error no answer stands.
  if (stream.IsProtocolError() && !op.status.IsProtocolError()) std::abort();
  // A hit is the data of the VA that opens the reply, nothing else.
  if (op.kind == OpKind::kGet && op.status.ok()) {
    if (!stream.ok() || !reply.starts_with("VA ")) std::abort();
    const std::size_t line_end = reply.find("\r\n");
    if (line_end == std::string::npos ||
        reply.compare(line_end + 2, lent.value.size(), lent.value) != 0) {
      std::abort();
    }
  }
  return 0;
}
