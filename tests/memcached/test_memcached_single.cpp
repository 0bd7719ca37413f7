// The memcached single-operation path without a server: commands built on the
// stack match the batch encoders byte for byte, and the text reader of a single
// operation (a TextBatch of one, which takes the usual reply straight off the
// buffer) decides every reply, usual or not, split at every offset, exactly as
// the general parser alone does (a TextBatch without the usual path).
#include <catch2/catch.hpp>
#include <deque>
#include <ostream>
#include <string>
#include <vector>

#include "cachet/net/read_buffer.h"
#include "command_line.h"
#include "request_bytes.h"
#include "text_batch.h"
#include "text_request.h"

namespace cachet::memcached {
namespace {

using namespace std::string_literals;

const ParserLimits kLimits{2048, 1024 * 1024};

// Encodes with both builders and checks they agree; returns the bytes.
template <class Encode>
std::string BothWays(Encode encode) {
  RequestBuffer buffer;
  CommandLine line;
  encode(buffer);
  encode(line);
  REQUIRE_FALSE(line.overflowed());
  const std::string bytes = Flatten(buffer);
  CHECK(Flatten(line) == bytes);
  return bytes;
}

Operation MakeOp(OpKind kind, std::string_view key) {
  Operation op;
  op.kind = kind;
  op.key = key;
  return op;
}

// What a reader made of a reply: done or not, the stream's status, and each
// operation's status and outputs.
struct Outcome {
  bool done = false;
  bool poisoned = false;
  Status stream;
  std::vector<std::string> ops;  // each one's status, value, flags, cas and counter

  // A protocol error's message quotes the bytes at hand, which depend on how
  // they arrived; its code does not.
  static bool SameStatus(const Status& a, const Status& b) {
    return a.IsProtocolError() && b.IsProtocolError() ? true : a.ToString() == b.ToString();
  }
  bool operator==(const Outcome& other) const {
    return done == other.done && poisoned == other.poisoned && SameStatus(stream, other.stream) &&
           ops == other.ops;
  }
};

std::ostream& operator<<(std::ostream& out, const Outcome& outcome) {
  out << "done " << outcome.done << ", poisoned " << outcome.poisoned << ", stream "
      << outcome.stream.ToString();
  for (const std::string& op : outcome.ops) out << "; " << op;
  return out;
}

std::string Describe(const Operation& op, const Item& item) {
  std::string out = op.status.ToString();
  if (op.status.ok() && op.kind == OpKind::kGet) {
    out += " '" + item.value + "' " + std::to_string(item.flags) + " " + std::to_string(item.cas);
  }
  if (op.status.ok() && (op.kind == OpKind::kIncr || op.kind == OpKind::kDecr)) {
    out += " " + std::to_string(op.counter);
  }
  return out;
}

void Append(net::ReadBuffer& buffer, std::string_view bytes) {
  char* dest = buffer.PrepareWrite(bytes.size() + 1);
  bytes.copy(dest, bytes.size());
  buffer.Commit(bytes.size());
}

// Feeds `reply` to `reader` as an exchange does: in the pieces `cuts` makes
// (ascending offsets), until the reader is done or fails; bytes left after it
// is done are an error; then the reader settles with the exchange's status.
template <class Reader>
Status Exchange(Reader& reader, std::string_view reply, const std::vector<std::size_t>& cuts,
                bool* done) {
  net::ReadBuffer buffer;
  Status stream;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= cuts.size() && stream.ok() && !reader.done(); ++i) {
    const std::size_t to = i < cuts.size() ? cuts[i] : reply.size();
    Append(buffer, reply.substr(from, to - from));
    from = to;
    stream = reader.Consume(buffer);
  }
  *done = reader.done();
  if (stream.ok() && *done && !buffer.empty()) stream = Status::ProtocolError("bytes after");
  reader.Settle(*done || !stream.ok() ? stream : Status::Timeout("cut short"));
  return stream;
}

// `kinds` sent as one batch, read by a TextBatch with or without the usual
// replies taken first.
Outcome ThroughBatch(const std::vector<OpKind>& kinds, std::string_view reply,
                     const std::vector<std::size_t>& cuts, bool usual_replies,
                     ParserLimits limits = kLimits) {
  static const std::string kKeys[] = {"k", "key2", "a-longer-key-03", "k4", "k5", "k6"};
  std::deque<Operation> ops;
  TextBatch batch(limits, usual_replies);
  batch.Reset({});
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    ops.push_back(MakeOp(kinds[i], kKeys[i % 6]));
    ops.back().result.value = "left over";
    batch.Add(ops.back());
  }
  batch.Finish();
  Outcome out;
  out.stream = Exchange(batch, reply, cuts, &out.done);
  out.poisoned = batch.poisoned();
  for (const Operation& op : ops) out.ops.push_back(Describe(op, op.result));
  return out;
}

// One operation read as the single-operation path reads it: this thread's
// TextBatch of one (ForOne), a get's hit going to an Item the caller lends.
Outcome ThroughSingle(OpKind kind, std::string_view reply, const std::vector<std::size_t>& cuts,
                      bool noreply = false, ParserLimits limits = kLimits) {
  Operation op = MakeOp(kind, "k");
  op.noreply = noreply;
  Item lent;
  lent.value = "left over from the last read";
  Item* hit = kind == OpKind::kGet ? &lent : &op.result;
  TextBatch& reader = TextBatch::ForOne(op, hit, limits);
  Outcome out;
  out.stream = Exchange(reader, reply, cuts, &out.done);
  out.poisoned = reader.poisoned();
  out.ops.push_back(Describe(op, *hit));
  return out;
}

// The single reader, split anywhere, decides as the general parser alone does
// on the same pieces: whole, cut in two at every offset, a byte at a time.
// Returns the outcome of the whole reply.
Outcome AgreeAtEveryOffset(OpKind kind, const std::string& reply) {
  const Outcome whole = ThroughSingle(kind, reply, {});
  CHECK(whole == ThroughBatch({kind}, reply, {}, false));
  for (std::size_t cut = 0; cut <= reply.size(); ++cut) {
    INFO("reply '" << reply << "' cut at " << cut);
    CHECK(ThroughSingle(kind, reply, {cut}) == ThroughBatch({kind}, reply, {cut}, false));
  }
  std::vector<std::size_t> every;
  for (std::size_t cut = 1; cut < reply.size(); ++cut) every.push_back(cut);
  INFO("reply '" << reply << "' a byte at a time");
  CHECK(ThroughSingle(kind, reply, every) == ThroughBatch({kind}, reply, every, false));
  return whole;
}

}  // namespace

TEST_CASE("single: stack-built commands match the batch encoders", "[memcached][single]") {
  CHECK(BothWays([](auto& out) {
          BeginTextRetrieval(out, false, 0);
          AppendTextKey(out, "user:42");
          EndTextLine(out);
        }) == "gets user:42\r\n");
  CHECK(BothWays([](auto& out) {
          AppendTextStore(out, StoreMode::kSet, "k", ItemView("hello", 7), 30, false);
        }) == "set k 7 30 5\r\nhello\r\n");
  CHECK(BothWays([](auto& out) {
          AppendTextStore(out, StoreMode::kCas, "k", ItemView("v", 0, 18446744073709551615u), -1,
                          true);
        }) == "cas k 0 -1 1 18446744073709551615 noreply\r\nv\r\n");
  CHECK(BothWays([](auto& out) { AppendTextDelete(out, "k", false); }) == "delete k\r\n");
  CHECK(BothWays([](auto& out) { AppendTextArithmetic(out, true, "n", 0, false); }) ==
        "decr n 0\r\n");
  CHECK(BothWays([](auto& out) { AppendTextTouch(out, "k", 9, true); }) == "touch k 9 noreply\r\n");
  CHECK(BothWays([](auto& out) {
          BeginTextRetrieval(out, true, 60);
          AppendTextKey(out, std::string(250, 'k'));
          EndTextLine(out);
        }) == "gats 60 " + std::string(250, 'k') + "\r\n");
}

TEST_CASE("single: large values are referenced, not copied", "[memcached][single]") {
  const std::string big(CommandLine::kCopyLimit, 'v');
  const std::string key(250, 'k');
  const std::string bytes = BothWays([&](auto& out) {
    AppendTextStore(out, StoreMode::kPrepend, key, ItemView(big, 4294967295u), 2592000, true);
  });
  CHECK(bytes.size() > big.size());
  CommandLine line;
  AppendTextStore(line, StoreMode::kSet, "k", ItemView(big), 0, false);
  iovec pieces[3];
  REQUIRE(line.Iovecs(pieces) == 3);
  CHECK(pieces[1].iov_base == big.data());
  CHECK(std::string_view(static_cast<const char*>(pieces[2].iov_base), pieces[2].iov_len) ==
        "\r\n");
  // A value just under the limit is copied into the line.
  CommandLine small;
  AppendTextStore(small, StoreMode::kSet, "k", ItemView(big.substr(1)), 0, false);
  CHECK(small.Iovecs(pieces) == 1);
}

TEST_CASE("single: a line that would not fit overflows instead of being cut",
          "[memcached][single]") {
  CommandLine line;
  for (std::size_t i = 0; i < CommandLine::kCapacity; ++i) line.Append('x');
  CHECK_FALSE(line.overflowed());
  line.Append('x');
  CHECK(line.overflowed());
  CHECK(line.text().size() == CommandLine::kCapacity);
  CommandLine two;
  const std::string big(CommandLine::kCopyLimit, 'v');
  two.AppendValue(big);
  two.AppendValue(big);
  CHECK(two.overflowed());
}

TEST_CASE("single: the usual replies are read, whole or split anywhere", "[memcached][single]") {
  struct Case {
    OpKind kind;
    std::string reply;
    std::string outcome;
  };
  const std::vector<Case> cases = {
      {OpKind::kGet, "END\r\n", "not_found"},
      {OpKind::kGet, "VALUE k 42 5 99\r\nhe\r\no\r\nEND\r\n", "ok 'he\r\no' 42 99"},
      {OpKind::kGet, "VALUE k 0 0\r\n\r\nEND\r\n", "ok '' 0 0"},
      {OpKind::kGet, "VALUE k 4294967295 1 18446744073709551615\r\nx\r\nEND\r\n",
       "ok 'x' 4294967295 18446744073709551615"},
      {OpKind::kGet, "VALUE k 0 01 00000000000000000007\r\nx\r\nEND\r\n", "ok 'x' 0 7"},
      {OpKind::kStore, "STORED\r\n", "ok"},
      {OpKind::kStore, "NOT_STORED\r\n", "not_stored"},
      {OpKind::kStore, "EXISTS\r\n", "exists"},
      {OpKind::kStore, "NOT_FOUND\r\n", "not_found"},
      {OpKind::kRemove, "DELETED\r\n", "ok"},
      {OpKind::kRemove, "NOT_FOUND\r\n", "not_found"},
      {OpKind::kIncr, "0\r\n", "ok 0"},
      {OpKind::kIncr, "18446744073709551615\r\n", "ok 18446744073709551615"},
      {OpKind::kDecr, "0012\r\n", "ok 12"},
      {OpKind::kIncr, "NOT_FOUND\r\n", "not_found"},
      {OpKind::kTouch, "TOUCHED\r\n", "ok"},
      {OpKind::kTouch, "NOT_FOUND\r\n", "not_found"},
  };
  for (const Case& c : cases) {
    INFO("reply '" << c.reply << "'");
    const Outcome out = AgreeAtEveryOffset(c.kind, c.reply);
    CHECK(out.done);
    CHECK(out.stream.ok());
    CHECK_FALSE(out.poisoned);
    CHECK(out.ops == std::vector<std::string>{c.outcome});
  }
}

TEST_CASE("single: unusual replies are judged as the general parser judges them",
          "[memcached][single]") {
  struct Case {
    OpKind kind;
    std::string reply;
    StatusCode stream;   // the exchange's outcome
    std::string op;      // the start of the operation's status
    bool poisoned = false;
  };
  const std::vector<Case> cases = {
      // Errors from the server.
      {OpKind::kGet, "SERVER_ERROR object too large for cache\r\n", StatusCode::kOk,
       "too_large: memcached: SERVER_ERROR object too large"},
      {OpKind::kStore, "SERVER_ERROR out of memory storing object\r\n", StatusCode::kOk,
       "io_error: memcached: SERVER_ERROR out of memory"},
      {OpKind::kGet, "CLIENT_ERROR bad command line format\r\n", StatusCode::kOk,
       "invalid_argument: memcached: CLIENT_ERROR bad command line format", true},
      {OpKind::kIncr, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n",
       StatusCode::kOk, "invalid_argument: memcached: CLIENT_ERROR cannot increment", true},
      {OpKind::kRemove, "ERROR\r\n", StatusCode::kOk, "protocol_error: memcached: ERROR", true},
      // A hit for a key that was not asked for.
      {OpKind::kGet, "VALUE kk 0 1\r\nx\r\nEND\r\n", StatusCode::kProtocolError,
       "protocol_error"},
      {OpKind::kGet, "VALUE other 0 1\r\nx\r\nEND\r\n", StatusCode::kProtocolError,
       "protocol_error"},
      // Bytes after the reply.
      {OpKind::kGet, "VALUE k 0 1\r\nx\r\nEND\r\nEND\r\n", StatusCode::kProtocolError,
       "protocol_error"},
      {OpKind::kGet, "END\r\nVALUE k 0 1\r\nx\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kStore, "STORED\r\nSTORED\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kRemove, "DELETED\r\nX", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kIncr, "12\r\n0\r\n", StatusCode::kProtocolError, "protocol_error"},
      // A second hit, a lying length, a bad number, a reply that does not fit.
      {OpKind::kGet, "VALUE k 0 1\r\nx\r\nVALUE k 0 1\r\nx\r\nEND\r\n",
       StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kGet, "VALUE k 0 1\r\nxy\r\nEND\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kGet, "VALUE k 4294967296 1\r\nx\r\nEND\r\n", StatusCode::kProtocolError,
       "protocol_error"},
      {OpKind::kGet, "VALUE k 0 1 18446744073709551616\r\nx\r\nEND\r\n",
       StatusCode::kProtocolError, "protocol_error"},
      // A space before a VALUE line's "\r\n" passes, in the general parser as in the usual path.
      {OpKind::kGet, "VALUE k 0 1 \r\nx\r\nEND\r\n", StatusCode::kOk, "ok 'x' 0 0"},
      {OpKind::kGet, "VALUE k 0 1048577\r\n", StatusCode::kTooLarge, "too_large"},
      {OpKind::kGet, "STORED\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kStore, "DELETED\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kRemove, "STORED\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kTouch, "DELETED\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kIncr, "TOUCHED\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kIncr, "12a\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kIncr, "18446744073709551616\r\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kIncr, "123456789012345678901\r\n", StatusCode::kProtocolError, "protocol_error"},
      // Lines not ended by "\r\n", and garbage.
      {OpKind::kStore, "STORED\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kGet, "END\n", StatusCode::kProtocolError, "protocol_error"},
      {OpKind::kRemove, "garbage\r\n", StatusCode::kProtocolError, "protocol_error"},
  };
  for (const Case& c : cases) {
    INFO("reply '" << c.reply << "'");
    const Outcome out = AgreeAtEveryOffset(c.kind, c.reply);
    CHECK(out.stream.code() == c.stream);
    REQUIRE(out.ops.size() == 1);
    CHECK(out.ops[0].starts_with(c.op));
    CHECK(out.poisoned == c.poisoned);
  }
  // A reply cut short waits for the rest: the exchange's failure is the answer.
  const Outcome cut = ThroughSingle(OpKind::kRemove, "DELET", {});
  CHECK_FALSE(cut.done);
  CHECK(cut.ops == std::vector<std::string>{"timeout: cut short"});
}

TEST_CASE("single: a usual reply with any one byte changed is judged as the parser judges it",
          "[memcached][single]") {
  // The usual lines are compared a word at a time, the words overlapping: a
  // change anywhere, in the first or the last word or where they overlap, must
  // make the line unusual (or another usual line), never the one it resembles.
  const std::vector<std::pair<OpKind, std::string>> lines = {
      {OpKind::kStore, "STORED\r\n"},     {OpKind::kStore, "NOT_STORED\r\n"},
      {OpKind::kStore, "EXISTS\r\n"},     {OpKind::kRemove, "DELETED\r\n"},
      {OpKind::kRemove, "NOT_FOUND\r\n"}, {OpKind::kTouch, "TOUCHED\r\n"},
      {OpKind::kIncr, "12345\r\n"},       {OpKind::kGet, "END\r\n"},
      {OpKind::kGet, "VALUE k 1 2 3\r\nab\r\nEND\r\n"},
  };
  for (const auto& [kind, line] : lines) {
    for (std::size_t at = 0; at < line.size(); ++at) {
      for (const char change : {'\x01', ' ', '\x7f'}) {
        std::string changed = line;
        changed[at] = static_cast<char>(changed[at] ^ change);
        INFO("'" << line << "' changed at " << at);
        CHECK(ThroughSingle(kind, changed, {}) == ThroughBatch({kind}, changed, {}, false));
        CHECK(ThroughSingle(kind, changed, {at}) == ThroughBatch({kind}, changed, {at}, false));
      }
    }
  }
  // A counter of every width, as long as each fixed reply line too.
  std::string digits;
  for (int width = 1; width <= 21; ++width) {
    digits += static_cast<char>('0' + width % 10);
    const Outcome out = AgreeAtEveryOffset(OpKind::kIncr, digits + "\r\n");
    if (width < 20) CHECK(out.ops == std::vector<std::string>{"ok " + digits});
  }
}

TEST_CASE("single: a batch of mixed commands reads the same with and without the usual path",
          "[memcached][single][batch]") {
  const std::vector<OpKind> kinds = {OpKind::kGet,  OpKind::kGet,   OpKind::kStore,
                                     OpKind::kIncr, OpKind::kRemove, OpKind::kGet};
  // Each ends with the VERSION that closes a batch of several replies.
  const std::vector<std::string> replies = {
      "VALUE k 1 2 3\r\nab\r\nEND\r\nSTORED\r\n7\r\nDELETED\r\nEND\r\nVERSION 1.6.18\r\n",
      "VALUE key2 0 1\r\nx\r\nEND\r\nNOT_STORED\r\nNOT_FOUND\r\nNOT_FOUND\r\nVALUE k 0 0\r\n\r\n"
      "END\r\nVERSION 1.6.18\r\n",
      "END\r\nSERVER_ERROR out of memory\r\n7\r\nDELETED\r\nEND\r\nVERSION 1.6.18\r\n",
      "VALUE key2 0 1\r\nx\r\nVALUE k 0 1\r\ny\r\nEND\r\nSTORED\r\n7\r\nDELETED\r\nEND\r\n"
      "VERSION 1.6.18\r\n",
      "END\r\nSTORED\r\nCLIENT_ERROR bad\r\nDELETED\r\nEND\r\nVERSION 1.6.18\r\n",
      "END\r\nSTORED\r\n7\r\nDELETED\r\nEND\r\nEND\r\nVERSION 1.6.18\r\n",
      "END\r\nSTORED\r\n7\r\nDELETED\r\nEND\r\n",
  };
  for (const std::string& reply : replies) {
    CHECK(ThroughBatch(kinds, reply, {}, true) == ThroughBatch(kinds, reply, {}, false));
    for (std::size_t cut = 0; cut <= reply.size(); ++cut) {
      INFO("reply '" << reply << "' cut at " << cut);
      CHECK(ThroughBatch(kinds, reply, {cut}, true) == ThroughBatch(kinds, reply, {cut}, false));
    }
  }
  const Outcome usual = ThroughBatch(kinds, replies[0], {}, true);
  CHECK(usual.ops == std::vector<std::string>{"ok 'ab' 1 3", "not_found", "ok", "ok 7", "ok",
                                              "not_found"});
}

TEST_CASE("single: a line over max_line is refused on the usual path too", "[memcached][single]") {
  // Limits smaller than any usual line: the general parser refuses each as too
  // long, and the usual path must not take it.
  for (const std::size_t max_line : {std::size_t{3}, std::size_t{6}, std::size_t{7}}) {
    const ParserLimits tiny{max_line, 1024};
    for (const auto& [kind, reply] : std::vector<std::pair<OpKind, std::string>>{
             {OpKind::kStore, "STORED\r\n"},
             {OpKind::kRemove, "DELETED\r\n"},
             {OpKind::kStore, "NOT_STORED\r\n"},
             {OpKind::kIncr, "12345678\r\n"},
             {OpKind::kGet, "END\r\n"}}) {
      INFO("max_line " << max_line << ", reply '" << reply << "'");
      const Outcome single = ThroughSingle(kind, reply, {}, false, tiny);
      CHECK(single == ThroughBatch({kind}, reply, {}, false, tiny));
      if (reply.size() - 2 > max_line) CHECK(single.stream.IsProtocolError());
    }
  }
}

TEST_CASE("single: a noreply command expects nothing and takes the exchange's outcome",
          "[memcached][single]") {
  Operation op = MakeOp(OpKind::kStore, "k");
  op.noreply = true;
  TextBatch& reader = TextBatch::ForOne(op, &op.result, kLimits);
  CHECK(reader.done());
  reader.Settle(Status::IoError("gone"));
  CHECK(op.status.IsIoError());
  // The thread's reader is readied anew for the next operation.
  Operation next = MakeOp(OpKind::kRemove, "k");
  CHECK(ThroughSingle(OpKind::kRemove, "DELETED\r\n", {}).ops == std::vector<std::string>{"ok"});
  TextBatch& again = TextBatch::ForOne(next, &next.result, kLimits);
  CHECK(&again == &reader);
  CHECK_FALSE(again.done());
}

}  // namespace cachet::memcached
