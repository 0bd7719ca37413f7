// Fuzz target: memcached's text reader (TextBatch) on arbitrary replies, split
// at arbitrary points, with and without its usual path.
//
// The usual path takes the replies it recognizes straight off the buffer
// (text_usual.h); everything else goes to the general parser. It must change
// nothing: for the same commands and the same pieces, the reader with the usual
// path (a single operation's, TextBatch::ForOne, when there is one command)
// must end exactly as the general parser alone: done or not, the stream's
// status, whether the connection is poisoned, each operation's status, value,
// flags, cas and counter. Out-of-bounds reads are ASan's to catch.
//
// Input: byte 0, the number of commands (1 to 6, low bits) and of cuts (high
// bits); then a byte per command (its kind, and noreply); then a byte per cut
// (where the reply is split); the rest is the reply, where a byte from 0xe0 up
// stands for a piece of a usual reply (kPieces), so that whole replies, and
// replies to the wrong command, are found quickly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "memcached_fuzz_replies.h"
#include "text_batch.h"

namespace {

using cachet::Item;
using cachet::OpKind;
using cachet::Operation;
using cachet::Status;
using cachet::memcached::ParserLimits;
using cachet::memcached::TextBatch;

constexpr ParserLimits kLimits{256, 1 << 20};
const std::string_view kKeys[] = {"k", "key2", "a-longer-key-03", "k", "k5", "k6"};
constexpr OpKind kKinds[] = {OpKind::kGet,  OpKind::kGet,  OpKind::kStore, OpKind::kRemove,
                             OpKind::kIncr, OpKind::kDecr, OpKind::kTouch};

const std::string_view kPieces[] = {
    "VALUE ", "END\r\n", "STORED\r\n", "NOT_STORED\r\n", "EXISTS\r\n", "NOT_FOUND\r\n",
    "DELETED\r\n", "TOUCHED\r\n", "\r\n", " ", "k", "key2", "a-longer-key-03", "k5", "0", "1",
    "12", "18446744073709551615", "18446744073709551616", "4294967296", "ERROR\r\n",
    "CLIENT_ERROR bad\r\n", "SERVER_ERROR object too large for cache\r\n", "VALUE k 0 1\r\nx\r\n",
    "VALUE key2 3 2 7\r\nab\r\n", "OK\r\n", "\n", "999999", "VALUE k 0 300\r\n", "65", "x",
    "ab", "VERSION 1.6.18\r\n"};  // VERSION closes a batch of several replies

struct Command {
  OpKind kind;
  bool noreply;
};

// What a reader made of the reply.
struct Outcome {
  bool done = false;
  bool poisoned = false;
  Status stream;
  std::vector<Operation> ops;  // statuses and results; keys are not compared
  std::vector<Item> items;     // where each hit went
};

// Feeds `reply` to `reader` in the pieces `cuts` makes (fuzz::Feed).
void Exchange(TextBatch& reader, std::string_view reply, const std::vector<std::size_t>& cuts,
              Outcome* out) {
  out->stream = cachet::memcached::fuzz::Feed(reader, reply, cuts, &out->done);
  out->poisoned = reader.poisoned();
}

void Fill(Outcome* out, const std::vector<Command>& commands) {
  out->ops.resize(commands.size());
  out->items.resize(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    Operation& op = out->ops[i];
    op.kind = commands[i].kind;
    op.key = kKeys[i];
    op.noreply = commands[i].noreply;
    op.result.value = "left over";
    out->items[i].value = "lent, left over";
  }
}

// The general parser alone, as a batch.
Outcome General(const std::vector<Command>& commands, std::string_view reply,
                const std::vector<std::size_t>& cuts) {
  Outcome out;
  Fill(&out, commands);
  TextBatch batch(kLimits, false);
  batch.Reset({});
  for (Operation& op : out.ops) batch.Add(op);
  batch.Finish();
  Exchange(batch, reply, cuts, &out);
  for (std::size_t i = 0; i < out.ops.size(); ++i) out.items[i] = out.ops[i].result;
  return out;
}

// With the usual path: a single operation's reader for one command (its hit
// going to a lent Item), else a batch.
Outcome Usual(const std::vector<Command>& commands, std::string_view reply,
              const std::vector<std::size_t>& cuts) {
  Outcome out;
  Fill(&out, commands);
  if (commands.size() == 1) {
    Operation& op = out.ops[0];
    Item* hit = op.kind == OpKind::kGet ? &out.items[0] : &op.result;
    Exchange(TextBatch::ForOne(op, hit, kLimits), reply, cuts, &out);
    if (hit == &op.result) out.items[0] = op.result;
    return out;
  }
  TextBatch batch(kLimits, true);
  batch.Reset({});
  for (Operation& op : out.ops) batch.Add(op);
  batch.Finish();
  Exchange(batch, reply, cuts, &out);
  for (std::size_t i = 0; i < out.ops.size(); ++i) out.items[i] = out.ops[i].result;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t count = 1 + (data[0] & 7) % 6;
  const std::size_t cut_count = data[0] >> 5;
  if (size < 1 + count + cut_count) return 0;
  std::vector<Command> commands;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint8_t byte = data[1 + i];
    const OpKind kind = kKinds[(byte & 0x7f) % 7];
    commands.push_back({kind, kind != OpKind::kGet && (byte & 0x80) != 0});
  }
  const std::string reply = cachet::memcached::fuzz::Expand(std::string_view(
      reinterpret_cast<const char*>(data) + 1 + count + cut_count, size - 1 - count - cut_count),
      kPieces);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < cut_count; ++i) {
    const std::size_t cut = reply.empty() ? 0 : data[1 + count + i] % (reply.size() + 1);
    if (cuts.empty() || cut >= cuts.back()) cuts.push_back(cut);
  }
  cachet::memcached::fuzz::CheckSame(Usual(commands, reply, cuts),
                                     General(commands, reply, cuts));
  return 0;
}
