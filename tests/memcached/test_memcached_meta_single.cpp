// The meta protocol's single-operation path without a server: the stack-built
// command matches the batch encoder byte for byte, and the meta reader of one
// operation (MetaBatch::ForOne) reads the one reply of a command sent alone,
// split at every offset, and refuses anything else: a reply for another O token
// or key, a second reply, an MN nobody asked for, malformed lines.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cachet/net/read_buffer.h"
#include "command_line.h"
#include "meta_batch.h"
#include "meta_request.h"
#include "request_bytes.h"

namespace cachet::memcached {
namespace {

const ParserLimits kLimits{2048, 1024 * 1024};

// `op`'s meta command with `tokens`, built both ways; checks they agree.
std::string BothWays(const Operation& op, const MetaTokens& tokens, bool touch_on_get = false,
                     std::int64_t exptime = 0) {
  RequestBuffer buffer;
  CommandLine line;
  AppendMetaOperation(buffer, op, tokens, touch_on_get, exptime);
  AppendMetaOperation(line, op, tokens, touch_on_get, exptime);
  REQUIRE_FALSE(line.overflowed());
  const std::string bytes = Flatten(buffer);
  CHECK(Flatten(line) == bytes);
  return bytes;
}

Operation MakeOp(OpKind kind, std::string_view key = "k") {
  Operation op;
  op.kind = kind;
  op.key = key;
  return op;
}

// What the reader made of one reply.
struct Outcome {
  Status stream;  // the exchange's
  Status op;      // the operation's
  bool done = false;
  bool poisoned = false;
  std::string value;  // a get's item, or "" when it was left alone
  std::uint64_t counter = 0;
};

// Feeds `reply` to the reader of one `op`, in the pieces `cuts` makes, as an
// exchange does: each piece in receives of at most what the buffer offers (a
// large value's data goes straight to its item), the reader consuming after
// each; bytes left after it is done are an error.
Outcome ReadOne(Operation op, std::string_view reply, const std::vector<std::size_t>& cuts = {},
                BatchSettings settings = {}) {
  Item lent;
  lent.value = "left over";
  MetaBatch& reader = MetaBatch::ForOne(op, settings, &lent, kLimits);
  net::ReadBuffer buffer;
  Outcome out;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= cuts.size() && out.stream.ok() && !reader.done(); ++i) {
    const std::size_t to = i < cuts.size() ? cuts[i] : reply.size();
    do {
      char* dest = buffer.PrepareWrite(64);
      const std::size_t n = std::min(buffer.writable(), to - from);
      reply.copy(dest, n, from);
      buffer.Commit(n);
      from += n;
      out.stream = reader.Consume(buffer);
    } while (from < to && out.stream.ok() && !reader.done());
  }
  out.done = reader.done();
  if (out.stream.ok() && out.done && !buffer.empty()) {
    out.stream = Status::ProtocolError("bytes after");
  }
  reader.Settle(out.done || !out.stream.ok() ? out.stream : Status::Timeout("cut short"));
  out.op = op.status;
  out.poisoned = reader.poisoned();
  out.value = lent.value == "left over" ? "" : lent.value;
  out.counter = op.counter;
  return out;
}

// ReadOne() whole, then split at every offset and a byte at a time: every way
// must end as the whole reply does.
Outcome ReadAtEveryOffset(const Operation& op, const std::string& reply) {
  const Outcome whole = ReadOne(op, reply);
  std::vector<std::size_t> every;
  for (std::size_t cut = 0; cut <= reply.size(); ++cut) {
    INFO("reply '" << reply << "' cut at " << cut);
    const Outcome split = ReadOne(op, reply, {cut});
    CHECK(split.op.ToString() == whole.op.ToString());
    CHECK(split.value == whole.value);
    CHECK(split.counter == whole.counter);
    if (cut > 0 && cut < reply.size()) every.push_back(cut);
  }
  const Outcome bytewise = ReadOne(op, reply, every);
  CHECK(bytewise.op.ToString() == whole.op.ToString());
  CHECK(bytewise.value == whole.value);
  return whole;
}

// A batch of `ops` read from `replies`, whole: each operation's outcome, and
// the request sent.
struct BatchRead {
  std::vector<Status> outcomes;
  std::string request;
  bool poisoned = false;
};
BatchRead ReadBatch(std::vector<Operation> ops, std::string_view replies) {
  MetaBatch batch(kLimits);
  batch.Reset(BatchSettings{});
  for (Operation& op : ops) batch.Add(op);
  batch.Finish();
  BatchRead out;
  out.request = Flatten(batch.request());
  net::ReadBuffer buffer;
  char* dest = buffer.PrepareWrite(replies.size());
  replies.copy(dest, replies.size());
  buffer.Commit(replies.size());
  Status stream = batch.Consume(buffer);
  if (stream.ok() && !batch.done()) stream = Status::Timeout("cut short");
  batch.Settle(stream);
  for (const Operation& op : ops) out.outcomes.push_back(op.status);
  out.poisoned = batch.poisoned();
  return out;
}

Operation Noreply(Operation op) {
  op.noreply = true;
  return op;
}

}  // namespace

TEST_CASE("meta single: commands are sent alone, without q or mn, unless noreply",
          "[memcached][single][meta]") {
  Operation get = MakeOp(OpKind::kGet, "user:42");
  CHECK(BothWays(get, MetaBatch::OneTokens(get, {})) == "mg user:42 v f c k O0\r\n");
  CHECK(BothWays(get, MetaBatch::OneTokens(get, {}), true, 60) == "mg user:42 v f c k T60 O0\r\n");
  Operation set = MakeOp(OpKind::kStore);
  set.mode = StoreMode::kAdd;
  set.item = ItemView("hello", 7);
  set.ttl = Ttl(30000);
  CHECK(BothWays(set, MetaBatch::OneTokens(set, {})) == "ms k 5 F7 T30 ME O0\r\nhello\r\n");
  set.noreply = true;
  CHECK(BothWays(set, MetaBatch::OneTokens(set, {})) == "ms k 5 F7 T30 ME O0 q\r\nhello\r\n");
  Operation incr = MakeOp(OpKind::kDecr);
  incr.delta = 3;
  CHECK(BothWays(incr, MetaBatch::OneTokens(incr, {})) == "ma k D3 MD v O0\r\n");
  CHECK(BothWays(MakeOp(OpKind::kRemove), {}) == "md k O0\r\n");
  Operation touch = MakeOp(OpKind::kTouch);
  touch.ttl = Ttl(9000);
  CHECK(BothWays(touch, {}) == "mg k T9 O0\r\n");
  // A binary key goes out base64 either way.
  CHECK(BothWays(MakeOp(OpKind::kRemove, std::string("\0\xff", 2)), {0, false, true}) ==
        "md AP8= b O0\r\n");
}

TEST_CASE("meta single: the one reply is read, whole or split anywhere",
          "[memcached][single][meta]") {
  Outcome hit = ReadAtEveryOffset(MakeOp(OpKind::kGet), "VA 5 f7 c99 O0\r\nhello\r\n");
  CHECK(hit.op.ok());
  CHECK(hit.value == "hello");
  CHECK(hit.done);
  CHECK_FALSE(hit.poisoned);
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kGet), "EN O0\r\n").op.IsNotFound());
  // A lease's placeholder is a miss to a plain read, as in a batch.
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kGet), "VA 0 f0 c5 W O0\r\n\r\n").op.IsNotFound());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kStore), "HD O0\r\n").op.ok());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kStore), "NS O0\r\n").op.IsNotStored());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kStore), "EX O0\r\n").op.IsExists());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kRemove), "HD O0\r\n").op.ok());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kRemove), "NF O0\r\n").op.IsNotFound());
  Outcome counter =
      ReadAtEveryOffset(MakeOp(OpKind::kIncr), "VA 20 O0\r\n18446744073709551615\r\n");
  CHECK(counter.op.ok());
  CHECK(counter.counter == 18446744073709551615u);
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kIncr), "NF O0\r\n").op.IsNotFound());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kTouch), "HD O0\r\n").op.ok());
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kTouch), "EN O0\r\n").op.IsNotFound());
  // A returned key that is the one asked for is fine.
  CHECK(ReadAtEveryOffset(MakeOp(OpKind::kGet), "VA 1 kk O0\r\nv\r\n").value == "v");
}

TEST_CASE("meta batch: an error line is the write's that sent it, never an earlier one's",
          "[memcached][batch][meta]") {
  // Writes answer (HD) unless noreply: memcached's error lines carry no O token,
  // and only the order of the replies tells whose they are.
  const BatchRead loud = ReadBatch(
      {MakeOp(OpKind::kStore, "a"), MakeOp(OpKind::kIncr, "n"), MakeOp(OpKind::kStore, "b")},
      "HD O0\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\nHD O2\r\n"
      "MN\r\n");
  CHECK(loud.request.find(" q") == std::string::npos);
  CHECK(loud.outcomes[0].ok());
  CHECK(loud.outcomes[1].IsInvalidArgument());
  CHECK(loud.outcomes[2].ok());
  CHECK(loud.poisoned);

  // noreply writes succeed in silence: an error after several of them may be
  // any one's, and each is told it may have failed (io_error: the outcome is
  // unknown); none is reported stored, nor refused.
  const BatchRead quiet =
      ReadBatch({Noreply(MakeOp(OpKind::kStore, "a")), Noreply(MakeOp(OpKind::kStore, "b")),
                 Noreply(MakeOp(OpKind::kIncr, "n"))},
                "CLIENT_ERROR cannot increment or decrement non-numeric value\r\nMN\r\n");
  for (const Status& s : quiet.outcomes) {
    INFO(s.ToString());
    CHECK(s.IsIoError());
    CHECK(s.ToString().find("one of 3 noreply writes may have failed, not known which") !=
          std::string::npos);
  }
  // An error line from the first noreply write, then a later noreply write's
  // own reply (NS) and a hit: the error was the first's alone, and every other
  // answer stands. (Found by an application's try: the error was given to both
  // writes at once, so the NS then matched no command and failed the batch.)
  Operation add = Noreply(MakeOp(OpKind::kStore, "q"));
  add.mode = StoreMode::kAdd;
  const BatchRead error_then_own =
      ReadBatch({Noreply(MakeOp(OpKind::kIncr, "q")), add, MakeOp(OpKind::kGet, "n")},
                "CLIENT_ERROR cannot increment or decrement non-numeric value\r\nNS O1\r\n"
                "VA 1 f0 c5 O2\r\nv\r\nMN\r\n");
  INFO(error_then_own.outcomes[0].ToString() << " / " << error_then_own.outcomes[1].ToString());
  CHECK(error_then_own.outcomes[0].IsInvalidArgument());
  CHECK(error_then_own.outcomes[1].IsNotStored());
  CHECK(error_then_own.outcomes[2].ok());
  // Two error lines from noreply writes, then a later one's own reply: the two
  // before it are each told they may have failed; the reply stands.
  const BatchRead two_then_own = ReadBatch(
      {Noreply(MakeOp(OpKind::kIncr, "q")), Noreply(MakeOp(OpKind::kIncr, "r")), add},
      "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
      "CLIENT_ERROR cannot increment or decrement non-numeric value\r\nNS O2\r\nMN\r\n");
  CHECK(two_then_own.outcomes[0].IsIoError());
  CHECK(two_then_own.outcomes[1].IsIoError());
  CHECK(two_then_own.outcomes[2].IsNotStored());
  // A too-large error whose write is not known: no set is told it was refused
  // for its size (Cache removes a refused set's key, and one of them was stored).
  const BatchRead unknown_size =
      ReadBatch({Noreply(MakeOp(OpKind::kStore, "small")), Noreply(MakeOp(OpKind::kStore, "big"))},
                "SERVER_ERROR object too large for cache\r\nMN\r\n");
  for (const Status& s : unknown_size.outcomes) {
    INFO(s.ToString());
    CHECK(s.IsIoError());
  }

  // A noreply write, then one that answers: the error may be either's, and what
  // comes next says whose. b's HD: a's. b's silence up to MN: b's, and a was stored.
  const std::string too_large = "SERVER_ERROR object too large for cache\r\n";
  const BatchRead then_stored =
      ReadBatch({Noreply(MakeOp(OpKind::kStore, "a")), MakeOp(OpKind::kStore, "b")},
                too_large + "HD O1\r\nMN\r\n");
  CHECK(then_stored.outcomes[0].IsTooLarge());
  CHECK(then_stored.outcomes[0].ToString().find("not known which") == std::string::npos);
  CHECK(then_stored.outcomes[1].ok());
  const BatchRead then_silent = ReadBatch(
      {Noreply(MakeOp(OpKind::kStore, "a")), MakeOp(OpKind::kStore, "b")}, too_large + "MN\r\n");
  CHECK(then_silent.outcomes[0].ok());
  CHECK(then_silent.outcomes[1].IsTooLarge());
  // A later noreply write's own reply (NS) after the error: the error was an
  // earlier one's. Two errors for two writes: neither is reported stored.
  const BatchRead then_later = ReadBatch(
      {Noreply(MakeOp(OpKind::kStore, "a")), Noreply(MakeOp(OpKind::kStore, "b")),
       MakeOp(OpKind::kStore, "c")},
      too_large + "NS O1\r\nHD O2\r\nMN\r\n");
  CHECK(then_later.outcomes[0].IsTooLarge());
  CHECK(then_later.outcomes[1].IsNotStored());
  CHECK(then_later.outcomes[2].ok());
  const BatchRead both = ReadBatch(
      {Noreply(MakeOp(OpKind::kStore, "a")), MakeOp(OpKind::kStore, "b")},
      too_large + too_large + "MN\r\n");
  CHECK(both.outcomes[0].IsIoError());  // one of the two errors, not known which
  CHECK_FALSE(both.outcomes[1].ok());
  // Two errors, then MN: they were the first noreply write's and the next
  // write's; the noreply write after those was stored.
  const BatchRead two_errors = ReadBatch(
      {Noreply(MakeOp(OpKind::kStore, "a")), MakeOp(OpKind::kStore, "b"),
       Noreply(MakeOp(OpKind::kStore, "c"))},
      too_large + too_large + "MN\r\n");
  CHECK_FALSE(two_errors.outcomes[0].ok());
  CHECK_FALSE(two_errors.outcomes[1].ok());
  CHECK(two_errors.outcomes[2].ok());

  // Reads are quiet and do not fail: the error is the write's between them.
  const BatchRead between_reads = ReadBatch(
      {MakeOp(OpKind::kGet, "g"), MakeOp(OpKind::kStore, "a"), MakeOp(OpKind::kGet, "h")},
      "VA 1 O0\r\nv\r\n" + too_large + "MN\r\n");
  CHECK(between_reads.outcomes[0].ok());
  CHECK(between_reads.outcomes[1].IsTooLarge());
  CHECK(between_reads.outcomes[2].IsNotFound());
}

TEST_CASE("meta batch: MN before a write's own reply fails it and drops the connection",
          "[memcached][batch][meta]") {
  const BatchRead missing = ReadBatch(
      {MakeOp(OpKind::kStore, "a"), MakeOp(OpKind::kStore, "b")}, "HD O0\r\nMN\r\n");
  CHECK(missing.outcomes[0].ok());
  CHECK(missing.outcomes[1].IsProtocolError());
  CHECK(missing.poisoned);
  // Silence from a noreply write is its success: the connection stays.
  const BatchRead quiet = ReadBatch(
      {MakeOp(OpKind::kStore, "a"), Noreply(MakeOp(OpKind::kStore, "b"))}, "HD O0\r\nMN\r\n");
  CHECK(quiet.outcomes[1].ok());
  CHECK_FALSE(quiet.poisoned);
}

TEST_CASE("meta single: a key stored binary comes back base64, and is still this key",
          "[memcached][single][meta]") {
  // memcached returns the key of an item a binary_keys client stored in base64, with b.
  const Outcome same =
      ReadAtEveryOffset(MakeOp(OpKind::kGet, "user1"), "VA 1 f0 c3 kdXNlcjE= b O0\r\nv\r\n");
  CHECK(same.stream.ok());
  CHECK(same.op.ok());
  CHECK(same.value == "v");
  const Outcome other =
      ReadOne(MakeOp(OpKind::kGet, "user1"), "VA 1 f0 c3 kdXNlcjI= b O0\r\nv\r\n");
  CHECK(other.stream.IsProtocolError());
  CHECK(other.value.empty());
  // Without b the key is compared as it is: the base64 text is another key.
  const Outcome unflagged =
      ReadOne(MakeOp(OpKind::kGet, "user1"), "VA 1 f0 c3 kdXNlcjE= O0\r\nv\r\n");
  CHECK(unflagged.stream.IsProtocolError());
}

TEST_CASE("meta single: a server error is the operation's, and the connection is dropped",
          "[memcached][single][meta]") {
  // memcached's error lines carry no O token: the stream may be out of step.
  const Outcome client = ReadOne(MakeOp(OpKind::kIncr), "CLIENT_ERROR cannot increment\r\n");
  CHECK(client.stream.ok());
  CHECK(client.op.IsInvalidArgument());
  CHECK(client.poisoned);
  const Outcome server = ReadOne(MakeOp(OpKind::kGet), "SERVER_ERROR out of memory\r\n");
  CHECK(server.op.IsIoError());
  CHECK(server.value.empty());
  CHECK(server.poisoned);
  CHECK(ReadOne(MakeOp(OpKind::kRemove), "ERROR\r\n").op.IsProtocolError());
}

TEST_CASE("meta single: replies that are not this command's are protocol errors",
          "[memcached][single][meta]") {
  const std::vector<std::pair<OpKind, std::string>> bad = {
      {OpKind::kGet, "VA 5 O1\r\nother\r\n"},         // another O token
      {OpKind::kGet, "VA 5 O0 kother\r\nother\r\n"},  // another key
      {OpKind::kGet, "VA 5\r\nother\r\n"},            // no token
      {OpKind::kRemove, "HD O0\r\nHD O0\r\n"},        // a second reply
      {OpKind::kGet, "VA 1 O0\r\nv\r\nEN O0\r\n"},    // a second reply after a hit
      {OpKind::kRemove, "MN\r\n"},                    // an mn nobody sent
      {OpKind::kRemove, "EN O0\r\n"},                 // a reply md never gets
      {OpKind::kStore, "VA 1 O0\r\nv\r\n"},           // a value to a store
      {OpKind::kGet, "VA x O0\r\nv\r\n"},             // malformed
      {OpKind::kRemove, "HD Oabc\r\n"},               // malformed token
      {OpKind::kRemove, "HD O0\n"},                   // a bare newline
      {OpKind::kRemove, "XX O0\r\n"},                 // no meta code
      {OpKind::kIncr, "VA 2 O0\r\nab\r\n"},           // a counter that is no number
      {OpKind::kIncr, "HD O0\r\n"},                  // ma asked for v: no counter in it
      {OpKind::kGet, "VA 3 O0\r\nabcd\r\n"},          // a data block too long
  };
  for (const auto& [kind, reply] : bad) {
    INFO("reply '" << reply << "'");
    const Outcome out = ReadOne(MakeOp(kind), reply);
    INFO("stream " << out.stream.ToString() << ", op " << out.op.ToString());
    CHECK(out.stream.IsProtocolError());
    CHECK(out.op.IsProtocolError());
    // Never another key's value, nor part of one.
    CHECK(out.value.find("other") == std::string::npos);
  }
}

TEST_CASE("meta single: a reply cut short leaves the exchange's error, never a value",
          "[memcached][single][meta]") {
  const std::string hit = "VA 5 O0\r\nhello\r\n";
  for (std::size_t size = 0; size < hit.size(); ++size) {
    INFO("the first " << size << " bytes");
    const Outcome out = ReadOne(MakeOp(OpKind::kGet), hit.substr(0, size));
    CHECK_FALSE(out.done);
    CHECK(out.op.IsTimeout());
    CHECK(out.value.empty());
  }
}

TEST_CASE("meta single: noreply keeps the batch's quiet form, so errors still come back",
          "[memcached][single][meta]") {
  Operation set = MakeOp(OpKind::kStore);
  set.noreply = true;
  CHECK(ReadAtEveryOffset(set, "MN\r\n").op.ok());
  CHECK(ReadAtEveryOffset(set, "NS O0\r\nMN\r\n").op.IsNotStored());
  // Quiet, nothing answers before MN, and nothing may follow it.
  CHECK(ReadOne(set, "MN\r\nHD O0\r\n").stream.IsProtocolError());
  // A touch sent quiet has lost its miss, as in a batch: ok.
  Operation touch = MakeOp(OpKind::kTouch);
  touch.noreply = true;
  CHECK(ReadOne(touch, "MN\r\n").op.ok());
}

TEST_CASE("meta single: a large value is read whole, however it arrives",
          "[memcached][single][meta]") {
  const std::string value(100000, 'v');
  const std::string reply = "VA 100000 f3 O0\r\n" + value + "\r\n";
  for (std::size_t cut : {std::size_t{10}, std::size_t{20}, std::size_t{5000}, reply.size() - 1}) {
    INFO("cut at " << cut);
    const Outcome out = ReadOne(MakeOp(OpKind::kGet), reply, {cut});
    CHECK(out.stream.ok());
    CHECK(out.op.ok());
    CHECK(out.value == value);
  }
  // Cut short inside the data: the exchange's error, not a partial value.
  const Outcome cut_short = ReadOne(MakeOp(OpKind::kGet), reply.substr(0, 50000), {20});
  CHECK(cut_short.op.IsTimeout());
}

TEST_CASE("meta single: a large value whose lease was won is a value, not a placeholder",
          "[memcached][single][meta]") {
  // memcached adds Z (or W) to every mg of an item whose recache win was given;
  // a large value's header is routed before its data arrives.
  const std::string value(100000, 'v');
  for (const char* flag : {"Z", "W"}) {
    const std::string reply = "VA 100000 f0 c4 O0 " + std::string(flag) + "\r\n" + value + "\r\n";
    for (std::size_t cut : {std::size_t{30}, std::size_t{5000}, reply.size()}) {
      INFO(flag << " cut at " << cut);
      const Outcome out = ReadOne(MakeOp(OpKind::kGet), reply, {cut});
      CHECK(out.stream.ok());
      CHECK(out.op.ok());
      CHECK(out.value == value);
      CHECK_FALSE(out.poisoned);
    }
  }
  // The placeholder itself (no bytes, no flags) stays a miss.
  const Outcome placeholder = ReadOne(MakeOp(OpKind::kGet), "VA 0 f0 c5 O0 Z\r\n\r\n");
  CHECK(placeholder.stream.ok());
  CHECK(placeholder.op.IsNotFound());
}

}  // namespace cachet::memcached
