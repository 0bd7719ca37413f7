// Fuzz target: memcached's meta reader (MetaBatch) on arbitrary replies, split
// at arbitrary points, with and without its usual path.
//
// The usual path parses the replies spelled as memcached answers cachet's
// commands straight off the buffer (meta_usual.h); everything else goes to the
// general parser. It must change nothing, which is checked twice:
// - the parse: wherever a reply starts, a reply the usual path takes is the
//   general parser's reply, field by field, spanning the same bytes;
// - the reader: for the same commands and the same pieces, the reader with the
//   usual path (a single operation's, MetaBatch::ForOne, when there is one
//   command) ends exactly as the general parser alone: done or not, the
//   stream's status, whether the connection is poisoned, each operation's
//   status, value, flags, cas and counter.
// Whatever arrives, the reader must also end in a decided state and never hand
// out a value that is not the answer to its command. Out-of-bounds reads are
// ASan's to catch.
//
// Input: byte 0, the number of commands (low 3 bits: 1 to 6; 6 and 7 stand for
// one command whose reply opens with a built one), binary keys (0x08), tiny
// limits (0x10) and the number of cuts (high 3 bits); then a byte per command
// (its kind and, for the first, its key in the low 6 bits; for one command,
// 0x40 sends it as a batch of one, with q and mn; noreply in 0x80); then a byte per cut (where the reply is
// split); the rest is the reply, where a byte from 0xe0 up stands for a piece of
// a meta reply (kPieces), so that whole replies, and replies to the wrong
// command, are found quickly. A built reply takes its first bytes as choices,
// one per field (BuildReply), so that near misses of the usual shape (a number
// just over its width, a line or data block ended wrong) are found quickly too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "memcached_fuzz_replies.h"
#include "meta_batch.h"
#include "meta_parser.h"
#include "meta_usual.h"

namespace {

using cachet::Item;
using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::memcached::BatchSettings;
using cachet::memcached::MetaBatch;
using cachet::memcached::ParserLimits;
using cachet::memcached::Reply;

constexpr ParserLimits kLimits{256, 1 << 20};
// Limits some of kPieces' whole replies pass and some do not: a line of 16
// bytes, a value of 4.
constexpr ParserLimits kTinyLimits{16, 4};
// The first command's key, picked by its byte: lengths whose compare takes a
// byte at a time, 4-byte words, and 8-byte words with and without a last
// overlapping one.
const std::string_view kFirstKeys[] = {"k", "user:42", "user:profile:42", "user:profile:4242"};
// The other commands' keys.
const std::string_view kOtherKeys[] = {"key2", "a-longer-key-03", "k", "k5", "k6"};
constexpr OpKind kKinds[] = {OpKind::kGet,  OpKind::kGet,  OpKind::kStore, OpKind::kRemove,
                             OpKind::kIncr, OpKind::kDecr, OpKind::kTouch};

const std::string_view kPieces[] = {"VA ",
                                    "HD",
                                    "EN",
                                    "NS",
                                    "EX",
                                    "NF",
                                    "MN\r\n",
                                    " O0",
                                    " O1",
                                    " O2",
                                    " kk",
                                    " kkey2",
                                    " kother",
                                    " f7",
                                    " c99",
                                    " W",
                                    " Z",
                                    " X",
                                    " b",
                                    "\r\n",
                                    "20",
                                    "hello",
                                    "ERROR\r\n",
                                    "CLIENT_ERROR bad\r\n",
                                    "SERVER_ERROR out of memory\r\n",
                                    "VA 5 f7 c99 kk O0\r\nhello\r\n",
                                    "HD O0\r\n",
                                    "EN kk O0\r\n",
                                    "VA 2 f0 c1 kkey2 O1\r\nab\r\n",
                                    "VA 1 O0\r\n7\r\n",
                                    "18446744073709551615",
                                    "4294967296"};
// A byte from 0xe0 up picks one of 32 pieces (fuzz::Expand).
static_assert(std::size(kPieces) == 32);

struct Command {
  OpKind kind;
  bool noreply;
  std::string_view key;
};

// What a reader made of the reply.
struct Outcome {
  bool done = false;
  bool poisoned = false;
  Status stream;
  std::deque<Operation> ops;  // statuses and results; keys are not compared
  std::deque<Item> items;     // where each hit went
};

void Fill(Outcome* out, const std::vector<Command>& commands) {
  out->ops.resize(commands.size());
  out->items.resize(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    Operation& op = out->ops[i];
    op.kind = commands[i].kind;
    op.key = commands[i].key;
    op.noreply = op.kind != OpKind::kGet && commands[i].noreply;
    op.status = Status::Internal("never decided");
    op.result.value = "left over";
    out->items[i].value = "lent, left over";
  }
}

// Reads `reply` with the usual path or without: one command as a single
// operation's reader reads it (its hit going to a lent Item), unless
// `batch_of_one`, else a batch.
Outcome Read(bool usual, const std::vector<Command>& commands, bool batch_of_one,
             const BatchSettings& settings, const ParserLimits& limits, std::string_view reply,
             const std::vector<std::size_t>& cuts) {
  Outcome out;
  Fill(&out, commands);
  // A batch's reader, or a single operation's without the usual path.
  MetaBatch own(limits, usual);
  MetaBatch* reader = &own;
  const bool alone = commands.size() == 1 && !batch_of_one;
  if (alone) {
    Operation& op = out.ops[0];
    Item* hit = op.kind == OpKind::kGet ? &out.items[0] : &op.result;
    if (usual) {
      reader = &MetaBatch::ForOne(op, settings, hit, limits);
    } else {
      own.ExpectOne(op, settings, hit);
    }
  } else {
    own.Reset(settings);
    for (Operation& op : out.ops) own.Add(op);
    own.Finish();
  }
  out.stream = cachet::memcached::fuzz::Feed(*reader, reply, cuts, &out.done);
  out.poisoned = reader->poisoned();
  if (!alone || out.ops[0].kind != OpKind::kGet) {
    for (std::size_t i = 0; i < out.ops.size(); ++i) out.items[i] = out.ops[i].result;
  }
  return out;
}

bool SameReply(const Reply& a, const Reply& b) {
  return a.kind == b.kind && a.key == b.key && a.data == b.data && a.text == b.text &&
         a.stat_value == b.stat_value && a.flags == b.flags && a.cas == b.cas &&
         a.number == b.number && a.opaque == b.opaque && a.has_opaque == b.has_opaque &&
         a.win == b.win && a.win_taken == b.win_taken && a.stale == b.stale;
}

// Wherever a reply starts (the reply's front, and after each reply the general
// parser reads), a reply the usual path takes is the general parser's, whether
// it expects a key (one of kFirstKeys, as a single get does) or takes any.
void CheckParse(std::string_view reply, const ParserLimits& limits) {
  const cachet::memcached::MetaReplyParser parser(limits);
  std::size_t at = 0;
  for (;;) {
    const std::string_view input = reply.substr(at);
    Reply general;
    const cachet::memcached::ParseResult parsed = parser.Parse(input, &general);
    for (const std::string_view key : {std::string_view(), kFirstKeys[0], kFirstKeys[1],
                                       kFirstKeys[2], kFirstKeys[3]}) {
      Reply usual;
      const std::size_t taken = cachet::memcached::UsualMetaReply(input, limits, key, &usual);
      if (taken == 0) continue;
      if (parsed.outcome != cachet::memcached::ParseOutcome::kReply || parsed.consumed != taken ||
          !SameReply(usual, general) || (!key.empty() && !usual.key.empty() && usual.key != key)) {
        std::abort();
      }
    }
    if (parsed.outcome != cachet::memcached::ParseOutcome::kReply) return;
    at += parsed.consumed;
  }
}

// The single operation's promises, whatever arrived.
void CheckDecided(const Outcome& out, std::string_view reply) {
  const Operation& op = out.ops[0];
  // Every end is decided: by a reply, by MN, or by the exchange's failure.
  if (op.status.code() == cachet::StatusCode::kInternal) std::abort();
  // After a protocol error no answer stands.
  if (out.stream.IsProtocolError() && !op.status.IsProtocolError()) std::abort();
  // A hit is the data of the VA that opens the reply, nothing else.
  if (op.kind == OpKind::kGet && op.status.ok()) {
    if (!out.stream.ok() || !reply.starts_with("VA ")) std::abort();
    const std::size_t line_end = reply.find("\r\n");
    const std::string& value = out.items[0].value;
    if (line_end == std::string::npos || reply.compare(line_end + 2, value.size(), value) != 0) {
      std::abort();
    }
  }
}

// A reply in the usual shape, each part chosen by a byte of `choices` (consumed):
// code, VA's size, f, c, k, O (0x80 leaves a flag out), a flag more, the line's
// end, the data and its end. The choices hold the usual values and near misses.
std::string BuildReply(std::string_view* choices) {
  static constexpr std::string_view kCodes[] = {"VA", "HD", "EN", "NS", "EX", "NF", "MN", "Va"};
  static constexpr std::string_view kNumbers[] = {"0",
                                                  "1",
                                                  "2",
                                                  "5",
                                                  "7",
                                                  "20",
                                                  "007",
                                                  "4294967295",
                                                  "4294967296",
                                                  "18446744073709551615",
                                                  "18446744073709551616",
                                                  "000000000000000000001",
                                                  "",
                                                  "x",
                                                  "-1",
                                                  "1x"};
  static constexpr std::string_view kKeyTokens[] = {
      "k",    "key2", "kk",    "",      "k\n", "k\r", "k\x01", "\xffk", "user:42", "user:43",
      "user:profile:42", "user:profile:43", "user:profile:4242", "user:profile:4243", "user:profile:424"};
  static constexpr std::string_view kExtras[] = {" t-1", " W", " Z", " b", " ", " f1", " O1", " q"};
  static constexpr std::string_view kEnds[] = {"\r\n", "\n", "\r",       " \r\n",
                                               "\rX",  "",   "\r\n\r\n", "X\r\n"};
  static constexpr std::string_view kData[] = {
      "", "7", "ab", "hello", "12345", "hello\r\n", "\r\n", "18446744073709551616"};
  auto next = [choices]() -> std::uint8_t {
    if (choices->empty()) return 0;
    const auto byte = static_cast<std::uint8_t>(choices->front());
    choices->remove_prefix(1);
    return byte;
  };
  auto pick = [](auto& menu, std::uint8_t byte) { return menu[byte % std::size(menu)]; };
  std::string out(pick(kCodes, next()));
  if (out == "VA" || out == "Va") out += " " + std::string(pick(kNumbers, next()));
  for (const char flag : {'f', 'c', 'k', 'O'}) {
    const std::uint8_t byte = next();
    if ((byte & 0x80) != 0) continue;
    out += ' ';
    out += flag;
    out += flag == 'k' ? pick(kKeyTokens, byte) : pick(kNumbers, byte);
  }
  const std::uint8_t extra = next();
  if ((extra & 0x80) == 0) out += pick(kExtras, extra);
  out += pick(kEnds, next());
  out += pick(kData, next());
  out += pick(kEnds, next());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool built = (data[0] & 7) >= 6;
  const std::size_t count = built ? 1 : 1 + (data[0] & 7);
  const std::size_t cut_count = data[0] >> 5;
  if (size < 1 + count + cut_count) return 0;
  BatchSettings settings;
  settings.binary_keys = (data[0] & 0x08) != 0;
  const ParserLimits limits = (data[0] & 0x10) != 0 ? kTinyLimits : kLimits;
  std::vector<Command> commands;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint8_t byte = data[1 + i];
    const std::string_view key = i == 0 ? kFirstKeys[(byte & 0x3f) / 7 % std::size(kFirstKeys)]
                                        : kOtherKeys[i - 1];
    commands.push_back({kKinds[(byte & 0x3f) % std::size(kKinds)], (byte & 0x80) != 0, key});
  }
  const bool batch_of_one = count == 1 && (data[1] & 0x40) != 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1 + count + cut_count,
                        size - 1 - count - cut_count);
  std::string reply = built ? BuildReply(&rest) : std::string();
  reply += cachet::memcached::fuzz::Expand(rest, kPieces);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < cut_count; ++i) {
    const std::size_t cut = reply.empty() ? 0 : data[1 + count + i] % (reply.size() + 1);
    if (cuts.empty() || cut >= cuts.back()) cuts.push_back(cut);
  }
  CheckParse(reply, limits);
  const Outcome usual = Read(true, commands, batch_of_one, settings, limits, reply, cuts);
  cachet::memcached::fuzz::CheckSame(
      usual, Read(false, commands, batch_of_one, settings, limits, reply, cuts));
  if (count == 1 && !batch_of_one) CheckDecided(usual, reply);
  return 0;
}
