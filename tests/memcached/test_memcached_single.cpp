// The memcached single-operation path without a server: commands built on the
// stack match the batch encoders byte for byte, and the quick reply
// recognizers agree with the batch reader (TextBatch) on every reply, split at
// every offset, and leave everything out of the ordinary to it.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cachet/net/read_buffer.h"
#include "command_line.h"
#include "quick_reply.h"
#include "single_text_reader.h"
#include "text_batch.h"
#include "text_request.h"

namespace cachet::memcached {
namespace {

using namespace std::string_literals;

const ParserLimits kLimits{2048, 1024 * 1024};

std::string Flatten(const RequestBuffer& buffer) {
  std::vector<iovec> iovs;
  buffer.Iovecs(&iovs);
  std::string out;
  for (const iovec& v : iovs) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

std::string Flatten(CommandLine& line) {
  iovec pieces[3];
  const int count = line.Iovecs(pieces);
  std::string out;
  for (int i = 0; i < count; ++i) {
    out.append(static_cast<const char*>(pieces[i].iov_base), pieces[i].iov_len);
  }
  return out;
}

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

// What one reader made of a reply: done or not, the stream's status, the
// operation's status and outputs.
struct Outcome {
  bool done = false;
  Status stream;
  Status op;
  std::string value;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
  std::uint64_t counter = 0;
};

// Feeds `bytes` to `reader` and settles `op` as the backend would.
template <class Reader>
Outcome Feed(Reader& reader, Operation& op, const Item& hit, std::string_view bytes) {
  net::ReadBuffer buffer;
  char* dest = buffer.PrepareWrite(bytes.size() + 1);
  bytes.copy(dest, bytes.size());
  buffer.Commit(bytes.size());
  Outcome out;
  out.stream = reader.Consume(buffer);
  out.done = reader.done();
  reader.Settle(out.done || !out.stream.ok() ? out.stream : Status::Timeout("cut short"));
  out.op = op.status;
  out.value = hit.value;
  out.flags = hit.flags;
  out.cas = hit.cas;
  out.counter = op.counter;
  return out;
}

Outcome ThroughBatch(OpKind kind, std::string_view key, std::string_view bytes) {
  Operation op = MakeOp(kind, key);
  TextBatch batch(kLimits);
  batch.Reset({});
  batch.Add(op);
  batch.Finish();
  return Feed(batch, op, op.result, bytes);
}

Outcome ThroughSingle(OpKind kind, std::string_view key, std::string_view bytes) {
  Operation op = MakeOp(kind, key);
  // As the backend does: a get's hit goes to an Item the caller lends (which
  // holds an earlier read), anything else's to op.result.
  Item lent;
  lent.value = "left over from the last read";
  Item* hit = kind == OpKind::kGet ? &lent : &op.result;
  SingleTextReader reader(op, hit, {}, kLimits);
  return Feed(reader, op, *hit, bytes);
}

void CheckSame(const Outcome& a, const Outcome& b) {
  CHECK(a.done == b.done);
  CHECK(a.stream.ToString() == b.stream.ToString());
  CHECK(a.op.ToString() == b.op.ToString());
  if (a.op.ok() && a.done) {
    CHECK(a.value == b.value);
    CHECK(a.flags == b.flags);
    CHECK(a.cas == b.cas);
    CHECK(a.counter == b.counter);
  }
}

// The single reader and the batch reader agree on `reply` and on each of its
// prefixes (a reply split at every offset).
void AgreeAtEveryOffset(OpKind kind, std::string_view key, const std::string& reply) {
  for (std::size_t cut = 0; cut <= reply.size(); ++cut) {
    INFO("reply '" << reply << "' cut at " << cut);
    const std::string_view bytes = std::string_view(reply).substr(0, cut);
    CheckSame(ThroughSingle(kind, key, bytes), ThroughBatch(kind, key, bytes));
  }
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

TEST_CASE("single: usual replies are read quickly", "[memcached][single]") {
  QuickReply hit = QuickTextRetrieval("VALUE k1 42 5 99\r\nhe\r\no\r\nEND\r\n", "k1", kLimits);
  REQUIRE(hit.outcome == QuickOutcome::kDone);
  CHECK(hit.code == StatusCode::kOk);
  CHECK(hit.data == "he\r\no");
  CHECK(hit.flags == 42);
  CHECK(hit.cas == 99);
  QuickReply miss = QuickTextRetrieval("END\r\n", "k1", kLimits);
  REQUIRE(miss.outcome == QuickOutcome::kDone);
  CHECK(miss.code == StatusCode::kNotFound);
  QuickReply counter = QuickTextLine("18446744073709551615\r\n", OpKind::kIncr, kLimits);
  REQUIRE(counter.outcome == QuickOutcome::kDone);
  CHECK(counter.number == 18446744073709551615u);
  CHECK(QuickTextLine("NOT_STORED\r\n", OpKind::kStore, kLimits).code == StatusCode::kNotStored);
  CHECK(QuickTextLine("EXISTS\r\n", OpKind::kStore, kLimits).code == StatusCode::kExists);
  CHECK(QuickTextLine("NOT_FOUND\r\n", OpKind::kRemove, kLimits).code == StatusCode::kNotFound);
  CHECK(QuickTextLine("TOUCHED\r\n", OpKind::kTouch, kLimits).code == StatusCode::kOk);
}

TEST_CASE("single: anything out of the ordinary is left to the batch reader",
          "[memcached][single]") {
  const auto unusual_get = [](std::string_view bytes) {
    return QuickTextRetrieval(bytes, "k", kLimits).outcome == QuickOutcome::kUnusual;
  };
  CHECK(unusual_get("VALUE other 0 1\r\nx\r\nEND\r\n"));     // a key not asked for
  CHECK(unusual_get("VALUE k 0 1\r\nx\r\nEND\r\nEND\r\n"));  // bytes after the reply
  CHECK(unusual_get("VALUE k 0 1\r\nxy\r\nEND\r\n"));        // a lying length
  CHECK(unusual_get("VALUE k 4294967296 1\r\nx\r\nEND\r\n"));
  CHECK(unusual_get("VALUE k 0 1048577\r\n"));  // over max_value
  CHECK(unusual_get("SERVER_ERROR out of memory\r\n"));
  CHECK(unusual_get("ERROR\r\n"));
  CHECK(unusual_get("END\n"));
  const auto unusual_line = [](std::string_view bytes, OpKind kind) {
    return QuickTextLine(bytes, kind, kLimits).outcome == QuickOutcome::kUnusual;
  };
  CHECK(unusual_line("STORED\r\nSTORED\r\n", OpKind::kStore));
  CHECK(unusual_line("DELETED\r\n", OpKind::kStore));  // a reply that does not fit
  CHECK(unusual_line("CLIENT_ERROR bad data chunk\r\n", OpKind::kStore));
  CHECK(unusual_line("STORED\r\nX", OpKind::kStore));
  CHECK(unusual_line("12a\r\n", OpKind::kIncr));
  CHECK(unusual_line("18446744073709551616\r\n", OpKind::kIncr));
  CHECK(unusual_line(std::string(kLimits.max_line + 2, 'S'), OpKind::kStore));
  CHECK(QuickTextLine(std::string(kLimits.max_line + 1, 'S'), OpKind::kStore, kLimits).outcome ==
        QuickOutcome::kNeedMore);
}

TEST_CASE("single: the single reader and the batch reader agree, at every offset",
          "[memcached][single]") {
  const std::vector<std::string> gets = {
      "END\r\n",
      "VALUE k 42 5 99\r\nhe\r\no\r\nEND\r\n",
      "VALUE k 0 0\r\n\r\nEND\r\n",
      "VALUE k 4294967295 1 18446744073709551615\r\nx\r\nEND\r\n",
      "VALUE k 0 1 18446744073709551616\r\nx\r\nEND\r\n",
      "VALUE k 0 1 123456789012345678901\r\nx\r\nEND\r\n",
      "VALUE k 0 01 00000000000000000000000007\r\nx\r\nEND\r\n",
      "VALUE k 7 3\r\nabc\r\nEND\r\n",
      "VALUE k 0 1\r\nx\r\nEND\r\nEND\r\n",
      "VALUE k 0 1\r\nxy\r\nEND\r\n",
      "VALUE kk 0 1\r\nx\r\nEND\r\n",
      "VALUE k 0 1 \r\nx\r\nEND\r\n",
      "VALUE k  0 1\r\nx\r\nEND\r\n",
      "VALUE k 0 1\r\nx\r\nVALUE k 0 1\r\nx\r\nEND\r\n",
      "VALUE k 0 1\r\nx\r\nSERVER_ERROR late\r\n",
      "SERVER_ERROR object too large for cache\r\n",
      "CLIENT_ERROR bad command line format\r\n",
      "ERROR\r\n",
      "STORED\r\n",
      "garbage\r\n",
  };
  for (const std::string& reply : gets) AgreeAtEveryOffset(OpKind::kGet, "k", reply);
  const std::vector<std::pair<OpKind, std::string>> lines = {
      {OpKind::kStore, "STORED\r\n"},
      {OpKind::kStore, "NOT_STORED\r\n"},
      {OpKind::kStore, "EXISTS\r\n"},
      {OpKind::kStore, "NOT_FOUND\r\n"},
      {OpKind::kStore, "DELETED\r\n"},
      {OpKind::kStore, "STORED\r\nSTORED\r\n"},
      {OpKind::kRemove, "DELETED\r\n"},
      {OpKind::kRemove, "NOT_FOUND\r\n"},
      {OpKind::kIncr, "0\r\n"},
      {OpKind::kIncr, "18446744073709551615\r\n"},
      {OpKind::kDecr, "12\r\n"},
      {OpKind::kIncr, "12a\r\n"},
      {OpKind::kIncr, "NOT_FOUND\r\n"},
      {OpKind::kTouch, "TOUCHED\r\n"},
      {OpKind::kTouch, "NOT_FOUND\r\n"},
      {OpKind::kStore, "SERVER_ERROR out of memory\r\n"},
      {OpKind::kIncr, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"},
      {OpKind::kRemove, "ERROR\r\n"},
      {OpKind::kStore, "STORED\n"},
  };
  for (const auto& [kind, reply] : lines) AgreeAtEveryOffset(kind, "k", reply);
  // A counter of every width: as long as each fixed reply line, too.
  std::string digits;
  for (int width = 1; width <= 21; ++width) {
    digits += static_cast<char>('0' + width % 10);
    AgreeAtEveryOffset(OpKind::kIncr, "k", digits + "\r\n");
    const QuickReply quick = QuickTextLine(digits + "\r\n", OpKind::kIncr, kLimits);
    if (width < 20) {
      REQUIRE(quick.outcome == QuickOutcome::kDone);
      CHECK(quick.code == StatusCode::kOk);
      CHECK(quick.number == std::stoull(digits));
    }
  }
}

TEST_CASE("single: a usual reply with any one byte changed is judged as the batch reader judges it",
          "[memcached][single]") {
  // The usual lines are compared a word at a time, the words overlapping: a
  // change anywhere, in the first or the last word or where they overlap, must
  // make the line unusual (or another usual line), never the one it resembles.
  const std::vector<std::pair<OpKind, std::string>> lines = {
      {OpKind::kStore, "STORED\r\n"},     {OpKind::kStore, "NOT_STORED\r\n"},
      {OpKind::kStore, "EXISTS\r\n"},     {OpKind::kRemove, "DELETED\r\n"},
      {OpKind::kRemove, "NOT_FOUND\r\n"}, {OpKind::kTouch, "TOUCHED\r\n"},
      {OpKind::kIncr, "12345\r\n"},
  };
  for (const auto& [kind, line] : lines) {
    for (std::size_t at = 0; at < line.size(); ++at) {
      for (const char change : {'\x01', ' ', '\x7f'}) {
        std::string changed = line;
        changed[at] = static_cast<char>(changed[at] ^ change);
        INFO("'" << line << "' changed at " << at);
        // A changed digit is another number; any other change is no usual line.
        const QuickReply quick = QuickTextLine(changed, kind, kLimits);
        if (kind != OpKind::kIncr || changed[at] < '0' || changed[at] > '9') {
          CHECK(quick.outcome != QuickOutcome::kDone);
        }
        CheckSame(ThroughSingle(kind, "k", changed), ThroughBatch(kind, "k", changed));
      }
    }
  }
}

TEST_CASE("single: a noreply command expects nothing and takes the exchange's outcome",
          "[memcached][single]") {
  Operation op = MakeOp(OpKind::kStore, "k");
  op.noreply = true;
  SingleTextReader reader(op, &op.result, {}, kLimits);
  CHECK(reader.done());
  reader.Settle(Status::IoError("gone"));
  CHECK(op.status.IsIoError());
}

}  // namespace cachet::memcached
