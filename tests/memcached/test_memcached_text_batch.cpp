// The text batch reader without a server: a gets line's replies, fed whole,
// split in two at every offset and byte by byte, route each hit to its key,
// find the misses, and refuse a VALUE for a key that was not asked for, lying
// lengths and garbage alike, however the bytes arrive. Hits for the key
// expected next are read without the general parser (QuickTextValue, text_usual.h), so these
// cases pin down that it decides exactly as the parser would.
#include <catch2/catch.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cachet/net/read_buffer.h"
#include "text_usual.h"
#include "reply_status.h"
#include "text_batch.h"
#include "text_parser.h"
#include "support/mutated_reply.h"

namespace cachet::memcached {
namespace {

const ParserLimits kLimits{2048, 1024 * 1024};

// What became of one operation.
struct OpOutcome {
  std::string status;
  std::string value;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;

  // A protocol error's message quotes the bytes at hand, which depend on how
  // they arrived; its code does not.
  bool operator==(const OpOutcome& other) const {
    const std::string_view kProtocolError = "protocol_error";
    const bool both_protocol_errors =
        status.starts_with(kProtocolError) && other.status.starts_with(kProtocolError);
    return (both_protocol_errors || status == other.status) && value == other.value &&
           flags == other.flags && cas == other.cas;
  }
};

// What became of a batch of gets: the stream's status and each operation's.
struct BatchOutcome {
  bool done = false;
  StatusCode stream = StatusCode::kOk;
  std::vector<OpOutcome> ops;

  bool operator==(const BatchOutcome&) const = default;
};

std::string Flatten(const net::RequestBuffer& buffer) {
  std::vector<iovec> iovs;
  buffer.Iovecs(&iovs);
  std::string out;
  for (const iovec& v : iovs) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

void Append(net::ReadBuffer& buffer, std::string_view bytes) {
  char* dest = buffer.PrepareWrite(bytes.size() + 1);
  bytes.copy(dest, bytes.size());
  buffer.Commit(bytes.size());
}

// A batch of gets of `keys`, their items holding bytes a hit must replace.
std::deque<Operation> Gets(const std::vector<std::string>& keys) {
  std::deque<Operation> ops(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ops[i].kind = OpKind::kGet;
    ops[i].key = keys[i];
    ops[i].result.value = "left over";
  }
  return ops;
}

// Feeds the batch of `ops` `reply` in the pieces `cuts` makes (offsets into
// the reply, ascending), stopping at the first error as the exchange would;
// then settles as the backend does. A counter's new value is its outcome's value.
BatchOutcome Feed(std::deque<Operation>& ops, std::string_view reply,
                  const std::vector<std::size_t>& cuts) {
  TextBatch batch(kLimits);
  batch.Reset({});
  for (Operation& op : ops) batch.Add(op);
  batch.Finish();
  net::ReadBuffer buffer;
  Status stream;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= cuts.size() && stream.ok(); ++i) {
    const std::size_t to = i < cuts.size() ? cuts[i] : reply.size();
    Append(buffer, reply.substr(from, to - from));
    from = to;
    stream = batch.Consume(buffer);
  }
  BatchOutcome out;
  out.done = batch.done();
  out.stream = stream.code();
  batch.Settle(out.done || !stream.ok() ? stream : Status::Timeout("cut short"));
  for (const Operation& op : ops) {
    OpOutcome o{op.status.ToString(), "", 0, 0};
    if (op.status.ok() && op.kind == OpKind::kGet) {
      o = {o.status, op.result.value, op.result.flags, op.result.cas};
    } else if (op.status.ok() && op.kind == OpKind::kIncr) {
      o.value = std::to_string(op.counter);
    }
    out.ops.push_back(o);
  }
  return out;
}

// Gets `keys` in one batch and feeds it `reply` as Feed() does.
BatchOutcome Run(const std::vector<std::string>& keys, std::string_view reply,
                 const std::vector<std::size_t>& cuts) {
  std::deque<Operation> ops = Gets(keys);
  return Feed(ops, reply, cuts);
}

// Feeds the batch `make()` builds `reply` whole, then split in two at every
// offset, then a byte at a time, and checks every way gives the same outcome;
// returns it.
BatchOutcome AnyHowSplitOps(const std::function<std::deque<Operation>()>& make,
                            const std::string& reply) {
  auto run = [&](const std::vector<std::size_t>& cuts) {
    std::deque<Operation> ops = make();
    return Feed(ops, reply, cuts);
  };
  const BatchOutcome whole = run({});
  for (std::size_t cut = 0; cut <= reply.size(); ++cut) {
    INFO("reply '" << reply << "' cut at " << cut);
    CHECK(run({cut}) == whole);
  }
  std::vector<std::size_t> every;
  for (std::size_t cut = 1; cut < reply.size(); ++cut) every.push_back(cut);
  INFO("reply '" << reply << "' a byte at a time");
  CHECK(run(every) == whole);
  return whole;
}

// AnyHowSplitOps() for a batch of gets of `keys`.
BatchOutcome AnyHowSplit(const std::vector<std::string>& keys, const std::string& reply) {
  return AnyHowSplitOps([&] { return Gets(keys); }, reply);
}

OpOutcome Hit(std::string value, std::uint32_t flags, std::uint64_t cas) {
  return {Status::OK().ToString(), std::move(value), flags, cas};
}

// A write or a counter that succeeded; a counter's value is its new count.
OpOutcome Done(std::string value = {}) { return {Status::OK().ToString(), std::move(value), 0, 0}; }

OpOutcome Miss() { return {Status::NotFound().ToString(), "", 0, 0}; }

// What the batch should make of `reply`, worked out with the general parser
// alone: hits in request order, the keys skipped are misses once the END
// comes, an error line closes the group (the keys skipped included), anything
// else, a VALUE for no key still open included, is a protocol error, after
// which no operation keeps an answer. Codes only.
BatchOutcome Reference(const std::vector<std::string>& keys, std::string_view reply) {
  TextReplyParser parser(kLimits);
  BatchOutcome out;
  out.ops.assign(keys.size(), OpOutcome{});
  std::size_t next = 0;
  std::vector<bool> hit(keys.size(), false);
  std::size_t too_large = keys.size();  // the key whose value was too large to read
  auto close = [&](const Status& status) {
    for (std::size_t i = 0; i < next; ++i) {
      if (!hit[i] && !status.IsNotFound()) out.ops[i].status = status.ToString();
    }
    for (; next < keys.size(); ++next) out.ops[next].status = status.ToString();
  };
  for (std::size_t guard = 0; guard <= reply.size(); ++guard) {
    Reply r;
    ParseResult parsed = parser.Parse(reply, &r);
    if (parsed.outcome == ParseOutcome::kNeedMore) break;
    if (parsed.outcome == ParseOutcome::kError) {
      out.stream = parsed.error.code();
      // A value too large to read is the first open key of that name's.
      for (std::size_t i = next; parsed.error.IsTooLarge() && i < keys.size(); ++i) {
        if (keys[i] == r.key) {
          too_large = i;
          break;
        }
      }
      break;
    }
    reply.remove_prefix(parsed.consumed);
    if (r.kind == ReplyKind::kEnd || IsErrorReply(r.kind)) {
      close(r.kind == ReplyKind::kEnd ? Status::NotFound() : StatusFromReply(r));
      out.done = true;
      // After ERROR nothing more is read (the server misread something); after
      // any other line, bytes left over are a reply too many.
      if (!reply.empty() && r.kind != ReplyKind::kError) out.stream = StatusCode::kProtocolError;
      break;
    }
    std::size_t found = next;
    while (r.kind == ReplyKind::kValue && found < keys.size() && keys[found] != r.key) ++found;
    if (r.kind != ReplyKind::kValue || found == keys.size()) {
      out.stream = StatusCode::kProtocolError;
      break;
    }
    for (; next < found; ++next) out.ops[next] = Miss();
    hit[next] = true;
    out.ops[next++] = Hit(std::string(r.data), r.flags, r.cas);
  }
  // Unanswered operations take the exchange's failure, as Settle() gives it.
  const Status failure = out.stream == StatusCode::kOk ? Status::Timeout("cut short")
                                                       : Status::FromCode(out.stream, "");
  // After a value too large to read, the keys left are not answered; that value's is too_large.
  if (!out.done) close(failure.IsTooLarge() ? Status::IoError("not answered") : failure);
  if (too_large < keys.size()) out.ops[too_large].status = failure.ToString();
  // After a protocol error no answer of the exchange stands; after an early
  // end (cut short, or a value too large to read) only the hits do.
  if (out.stream == StatusCode::kProtocolError) {
    for (OpOutcome& op : out.ops) op = {failure.ToString(), "", 0, 0};
  } else if (!out.done) {
    const Status unanswered = failure.IsTooLarge() ? Status::IoError("not answered") : failure;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i != too_large && !hit[i]) out.ops[i] = {unanswered.ToString(), "", 0, 0};
    }
  }
  return out;
}

// Codes, values, flags and cas; messages are not compared.
bool SameCodes(const BatchOutcome& a, const BatchOutcome& b) {
  if (a.done != b.done || a.stream != b.stream || a.ops.size() != b.ops.size()) return false;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const std::string_view code_a = std::string_view(a.ops[i].status).substr(0, 9);
    const std::string_view code_b = std::string_view(b.ops[i].status).substr(0, 9);
    if (code_a != code_b || a.ops[i].value != b.ops[i].value || a.ops[i].flags != b.ops[i].flags ||
        a.ops[i].cas != b.ops[i].cas) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("text batch: a gets line's keys go out as one line", "[memcached][batch]") {
  std::deque<Operation> ops(4);
  const char* keys[] = {"a", "bb", "k", "ccc"};
  TextBatch batch(kLimits);
  batch.Reset({});
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ops[i].kind = i == 2 ? OpKind::kRemove : OpKind::kGet;
    ops[i].key = keys[i];
    batch.Add(ops[i]);
  }
  batch.Finish();
  CHECK(Flatten(batch.request()) == "gets a bb\r\ndelete k\r\ngets ccc\r\nversion\r\n");
  // A reused batch sends only its new keys, however long the last line was.
  batch.Reset({false, true, std::chrono::seconds(10)});
  batch.Add(ops[1]);
  batch.Finish();
  CHECK(Flatten(batch.request()) == "gats 10 bb\r\n");
}

TEST_CASE("text batch: hits go to their keys, the keys skipped are misses", "[memcached][batch]") {
  const std::vector<std::string> keys = {"a", "bb", "ccc", "dddddddddddddddd0"};
  BatchOutcome out = AnyHowSplit(
      keys,
      "VALUE a 1 1 5\r\nx\r\nVALUE ccc 3 2 7\r\nyz\r\nVALUE dddddddddddddddd0 0 0\r\n\r\nEND\r\n");
  CHECK(out.done);
  CHECK(out.stream == StatusCode::kOk);
  CHECK(out.ops == std::vector<OpOutcome>{Hit("x", 1, 5), Miss(), Hit("yz", 3, 7), Hit("", 0, 0)});

  // Data holding "\r\n" and "VALUE", the widest numbers, leading zeros.
  out = AnyHowSplit({"a", "b"},
                    "VALUE a 4294967295 9 18446744073709551615\r\nVALUE b\r\n\r\n"
                    "VALUE b 007 2 00000000000000000009\r\nok\r\nEND\r\n");
  CHECK(out.stream == StatusCode::kOk);
  CHECK(out.ops == std::vector<OpOutcome>{Hit("VALUE b\r\n", 4294967295u, 18446744073709551615u),
                                          Hit("ok", 7, 9)});

  // A key that begins like another is not taken for it.
  out = AnyHowSplit({"a", "ab"}, "VALUE ab 0 1\r\nx\r\nEND\r\n");
  CHECK(out.stream == StatusCode::kOk);
  CHECK(out.ops == std::vector<OpOutcome>{Miss(), Hit("x", 0, 0)});

  // The general parser has always let a space end the size; so does the batch.
  out = AnyHowSplit({"a"}, "VALUE a 0 1 \r\nx\r\nEND\r\n");
  CHECK(out.ops == std::vector<OpOutcome>{Hit("x", 0, 0)});

  out = AnyHowSplit({"a", "b"}, "END\r\n");
  CHECK(out.ops == std::vector<OpOutcome>{Miss(), Miss()});
}

TEST_CASE("text batch: a VALUE for a key not asked for is a protocol error", "[memcached][batch]") {
  const std::vector<std::string> strays = {
      "VALUE zz 0 1\r\nx\r\nEND\r\n", "VALUE a 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nEND\r\n",
      "VALUE b 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nEND\r\n", "VALUE ab 0 1\r\nx\r\nEND\r\n",
      "VALUE A 0 1\r\nx\r\nEND\r\n"};
  for (const std::string& reply : strays) {
    INFO(reply);
    CHECK(AnyHowSplit({"a", "b"}, reply).stream == StatusCode::kProtocolError);
  }
  // After the protocol error no answer stands: not the hit before the stray
  // VALUE, and no key is taken for a miss.
  auto all_failed = [](const BatchOutcome& out) {
    for (const OpOutcome& op : out.ops) {
      if (!op.status.starts_with("protocol_error")) return false;
    }
    return out.stream == StatusCode::kProtocolError;
  };
  CHECK(all_failed(AnyHowSplit({"a", "b"}, "VALUE a 0 1\r\nx\r\nVALUE zz 0 1\r\ny\r\n")));
  // Out of request order.
  CHECK(all_failed(AnyHowSplit(
      {"a", "b", "c"}, "VALUE b 0 1\r\ny\r\nVALUE a 0 1\r\nx\r\nVALUE c 0 1\r\nz\r\nEND\r\n")));
  // A duplicate beyond what was asked, and a key not asked for after a skip.
  CHECK(all_failed(AnyHowSplit({"a", "b"}, "VALUE b 0 1\r\ny\r\nVALUE b 0 1\r\ny\r\nEND\r\n")));
  CHECK(all_failed(
      AnyHowSplit({"a", "b", "c"}, "VALUE b 0 1\r\ny\r\nVALUE other 0 1\r\nz\r\nEND\r\n")));

  // A lone get answered for another key, as the single path sends it.
  CHECK(all_failed(AnyHowSplit({"key"}, "VALUE other 0 5\r\nhello\r\nEND\r\n")));
}

TEST_CASE("text batch: lying lengths and garbage are protocol errors", "[memcached][batch]") {
  const std::vector<std::string> garbage = {
      "VALUE a 0 3\r\nx\r\nEND\r\n",                        // longer than the data
      "VALUE a 0 0\r\nx\r\nEND\r\n",                        // shorter
      "VALUE a 0 2\r\nx\r\nEND\r\n",                        // one byte short
      "VALUE a 0 1\r\nx\nEND\r\n",                          // data not ended by \r\n
      "VALUE a  1 5\r\nx\r\nEND\r\n",                       // no flags, the rest well formed
      "VALUE a 0  1\r\n\r\nEND\r\n",                        // no size, the rest well formed
      "VALUE a x 1\r\nx\r\nEND\r\n",                        // no flags
      "VALUE a 0 -1\r\nx\r\nEND\r\n",                       // a sign
      "VALUE a 0 1 2 3\r\nx\r\nEND\r\n",                    // a fourth number
      "VALUE a  0 1\r\nx\r\nEND\r\n",                       // two spaces
      "VALUE a 0  1\r\nx\r\nEND\r\n",                       //
      "VALUE a 0 1\nx\r\nEND\r\n",                          // a bare \n
      "VALUE a 4294967296 1\r\nx\r\nEND\r\n",               // flags over 32 bits
      "VALUE a 0 1 18446744073709551616\r\nx\r\nEND\r\n",   // cas over 64 bits
      "VALUE a 0 1 000000000000000000001\r\nx\r\nEND\r\n",  // 21 digits
      "VALUE a 0 18446744073709551616\r\nx\r\nEND\r\n",     // size over 64 bits
      "VALUE a 0 1\rx\r\nEND\r\n",                          // a bare \r
      "VALUE a\r\nx\r\nEND\r\n",                            // no numbers
      "VALUE\r\nEND\r\n",                                   //
      "value a 0 1\r\nx\r\nEND\r\n",                        // lower case
      "VALUE a 0 1\r\nx\r\nEND\r\nEND\r\n",                 // bytes after the last
      "STORED\r\n",                                         // no retrieval reply
  };
  for (const std::string& reply : garbage) {
    INFO(reply);
    const BatchOutcome out = AnyHowSplit({"a"}, reply);
    CHECK(out.stream == StatusCode::kProtocolError);
    if (reply.ends_with("END\r\nEND\r\n")) continue;  // the hit itself was whole
    CHECK(out.ops[0].status.find("protocol_error") != std::string::npos);
  }
  // A value over max_item_size is too_large, not read.
  CHECK(AnyHowSplit({"a"}, "VALUE a 0 1048577\r\n").stream == StatusCode::kTooLarge);
}


TEST_CASE("text batch: an error line ends the group with the server's word", "[memcached][batch]") {
  const BatchOutcome out =
      AnyHowSplit({"a", "b"}, "VALUE a 0 1\r\nx\r\nSERVER_ERROR out of memory\r\n");
  CHECK(out.stream == StatusCode::kOk);
  CHECK(out.ops[0] == Hit("x", 0, 0));
  CHECK(out.ops[1].status.find("out of memory") != std::string::npos);

  // A key a VALUE skipped is a miss only if an END says so.
  const BatchOutcome skipped =
      AnyHowSplit({"a", "b"}, "VALUE b 0 1\r\ny\r\nSERVER_ERROR out of memory\r\n");
  CHECK(skipped.ops[0].status.find("out of memory") != std::string::npos);
  CHECK(skipped.ops[1] == Hit("y", 0, 0));
}

// Operations for the out-of-step cases: a set of "a" then incrs of "b" and "c".
std::deque<Operation> SetThenIncrs() {
  std::deque<Operation> ops(3);
  ops[0].kind = OpKind::kStore;
  ops[0].key = "a";
  ops[0].item = ItemView("v");
  for (std::size_t i : {1, 2}) {
    ops[i].kind = OpKind::kIncr;
    ops[i].key = i == 1 ? "b" : "c";
    ops[i].delta = 1;
  }
  return ops;
}

// A data block memcached refuses ("bad data chunk") or a storage line it
// cannot parse leaves the data to be read as commands: their ERROR lines come
// before the next command's reply. Paired in order, "c" would take b's 5.
TEST_CASE("text batch: no reply is paired after an error line that may put the stream out of step",
          "[memcached][batch]") {
  const BatchOutcome chunk =
      AnyHowSplitOps(SetThenIncrs, "CLIENT_ERROR bad data chunk\r\nERROR\r\n5\r\n");
  CHECK(chunk.done);
  CHECK(chunk.stream == StatusCode::kOk);
  CHECK(chunk.ops[0].status.find("bad data chunk") != std::string::npos);
  for (std::size_t i : {1, 2}) {
    INFO(chunk.ops[i].status);
    CHECK(chunk.ops[i].status.starts_with("protocol_error"));
    CHECK(chunk.ops[i].status.find("out of step") != std::string::npos);
  }
  // A plain ERROR, to whatever command it came: no later reply is read, and
  // the earlier one is not kept either (a reply skipped before the ERROR would
  // have paired it with the wrong command); a hit names its key, and stands.
  const BatchOutcome error = AnyHowSplitOps(SetThenIncrs, "STORED\r\nERROR\r\n5\r\n");
  CHECK(error.ops[0].status.starts_with("io_error"));
  CHECK(error.ops[0].status.find("answer not kept") != std::string::npos);
  CHECK(error.ops[1].status.find("ERROR") != std::string::npos);
  CHECK(error.ops[2].status.find("out of step") != std::string::npos);
  const std::vector<std::string> keys{"a", "b"};  // the operations view them
  const BatchOutcome in_gets = AnyHowSplitOps(
      [&] {
        std::deque<Operation> ops = Gets(keys);
        ops.emplace_back();
        ops.back().kind = OpKind::kIncr;
        ops.back().key = "c";
        return ops;
      },
      "VALUE a 0 1\r\nx\r\nERROR\r\n5\r\n");
  CHECK(in_gets.ops[0] == Hit("x", 0, 0));
  CHECK(in_gets.ops[1].status.find("ERROR") != std::string::npos);
  CHECK(in_gets.ops[2].status.find("out of step") != std::string::npos);
}

// A get, then a noreply set: the request ends with "version", whose reply ends
// the exchange, so the set's bytes are sent whole before it can end.
std::deque<Operation> GetThenSilentSet() {
  std::deque<Operation> ops(2);
  ops[0].key = "a";
  ops[1].kind = OpKind::kStore;
  ops[1].key = "b";
  ops[1].item = ItemView("v");
  ops[1].noreply = true;
  return ops;
}

TEST_CASE("text batch: noreply commands at the end are closed by version", "[memcached][batch]") {
  {
    std::deque<Operation> ops = GetThenSilentSet();
    TextBatch batch(kLimits);
    batch.Reset({});
    for (Operation& op : ops) batch.Add(op);
    batch.Finish();
    CHECK(Flatten(batch.request()).ends_with(" noreply\r\nv\r\nversion\r\n"));
  }
  const BatchOutcome closed =
      AnyHowSplitOps(GetThenSilentSet, "VALUE a 0 1\r\nx\r\nEND\r\nVERSION 1.6.18\r\n");
  CHECK(closed.done);
  CHECK(closed.stream == StatusCode::kOk);
  CHECK(closed.ops[0] == Hit("x", 0, 0));
  CHECK(closed.ops[1] == Done());
  // Without its VERSION the exchange is not over.
  CHECK_FALSE(AnyHowSplitOps(GetThenSilentSet, "VALUE a 0 1\r\nx\r\nEND\r\n").done);
  // Anything else where VERSION belongs: no answer of the exchange stands.
  for (const char* other : {"END\r\nERROR\r\n", "END\r\nSTORED\r\n"}) {
    INFO(other);
    const BatchOutcome out = AnyHowSplitOps(GetThenSilentSet, other);
    CHECK(out.stream == StatusCode::kProtocolError);
    for (const OpOutcome& op : out.ops) CHECK(op.status.starts_with("protocol_error"));
  }
}

TEST_CASE("text batch: after a reply too large to read, the writes left unanswered are io_error",
          "[memcached][batch]") {
  // Not too_large: they were not refused for their size (a set refused so has
  // its key removed), and the server may have applied them.
  const BatchOutcome out = AnyHowSplitOps(
      [] {
        std::deque<Operation> ops = GetThenSilentSet();
        ops.emplace_back();
        ops.back().kind = OpKind::kStore;
        ops.back().key = "c";
        ops.back().item = ItemView("v");
        return ops;
      },
      "VALUE a 0 1048577\r\n");
  CHECK(out.stream == StatusCode::kTooLarge);
  CHECK(out.ops[0].status.starts_with("too_large"));
  for (std::size_t i : {1, 2}) {
    INFO(out.ops[i].status);
    CHECK(out.ops[i].status.starts_with("io_error"));
    CHECK(out.ops[i].status.find("may have been applied") != std::string::npos);
  }
}

TEST_CASE("text batch: a counter's CLIENT_ERROR keeps the stream in step", "[memcached][batch]") {
  // incr of a value that is no number: one line in, one line out.
  const BatchOutcome out = AnyHowSplitOps(
      SetThenIncrs,
      "STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n5\r\n"
      "VERSION 1.6.18\r\n");
  CHECK(out.stream == StatusCode::kOk);
  CHECK(out.ops[0] == Done());
  CHECK(out.ops[1].status.find("non-numeric") != std::string::npos);
  CHECK(out.ops[2] == Done("5"));
}

// Text replies carry no mark of their request: a reply sent twice would stand
// in for the next command's, whose own would arrive after the batch, as the
// answer to the connection's next command (an add told STORED when it was not).
// A batch of several replies ends with "version", so the extra one is seen.
TEST_CASE("text batch: a reply sent twice among several is a protocol error, not an answer",
          "[memcached][batch]") {
  {
    std::deque<Operation> one = SetThenIncrs();
    one.resize(1);
    TextBatch batch(kLimits);
    batch.Reset({});
    batch.Add(one[0]);
    batch.Finish();
    CHECK_FALSE(Flatten(batch.request()).ends_with("version\r\n"));  // one reply: its own end
  }
  std::deque<Operation> ops = SetThenIncrs();
  TextBatch batch(kLimits);
  batch.Reset({});
  for (Operation& op : ops) batch.Add(op);
  batch.Finish();
  CHECK(Flatten(batch.request()).ends_with("incr c 1\r\nversion\r\n"));
  const BatchOutcome right = AnyHowSplitOps(SetThenIncrs, "STORED\r\n5\r\n6\r\nVERSION 1.6.18\r\n");
  CHECK(right.stream == StatusCode::kOk);
  CHECK(right.ops[2] == Done("6"));
  for (const char* twice : {"STORED\r\nSTORED\r\n5\r\n6\r\nVERSION 1.6.18\r\n",
                            "STORED\r\n5\r\n5\r\n6\r\nVERSION 1.6.18\r\n",
                            "STORED\r\n5\r\n6\r\n6\r\nVERSION 1.6.18\r\n"}) {
    INFO(twice);
    const BatchOutcome out = AnyHowSplitOps(SetThenIncrs, twice);
    CHECK(out.stream == StatusCode::kProtocolError);
    for (const OpOutcome& op : out.ops) CHECK(op.status.starts_with("protocol_error"));
  }
  const BatchOutcome last_twice =
      AnyHowSplitOps(SetThenIncrs, "STORED\r\n5\r\n6\r\n6\r\nVERSION 1.6.18\r\n");
  CHECK(last_twice.ops[2].status.find("a number where the VERSION") != std::string::npos);
  // One skipped (its reply late): VERSION comes where a counter's line belongs.
  const BatchOutcome skipped = AnyHowSplitOps(SetThenIncrs, "STORED\r\n5\r\nVERSION 1.6.18\r\n");
  CHECK(skipped.stream == StatusCode::kProtocolError);
  for (const OpOutcome& op : skipped.ops) CHECK(op.status.starts_with("protocol_error"));
}

TEST_CASE("text batch: QuickTextValue reads one hit for the key expected", "[memcached][batch]") {
  std::size_t consumed = 0;
  QuickReply hit = QuickTextValue("VALUE key 5 3 9\r\nabc\r\nEND\r\n", "key", kLimits, &consumed);
  CHECK(hit.outcome == QuickOutcome::kDone);
  CHECK(hit.data == "abc");
  CHECK(hit.flags == 5);
  CHECK(hit.cas == 9);
  CHECK(consumed == 22);
  const std::string whole = "VALUE key 5 3\r\nabc\r\n";
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK(QuickTextValue(whole.substr(0, cut), "key", kLimits, &consumed).outcome ==
          QuickOutcome::kNeedMore);
    // Within the line, a byte that does not belong there is no prefix.
    if (cut < 15) {
      CHECK(QuickTextValue(whole.substr(0, cut) + "#", "key", kLimits, &consumed).outcome ==
            QuickOutcome::kUnusual);
    }
  }
  CHECK(QuickTextValue(whole, "kez", kLimits, &consumed).outcome == QuickOutcome::kUnusual);
  CHECK(QuickTextValue(whole, "ke", kLimits, &consumed).outcome == QuickOutcome::kUnusual);
  CHECK(QuickTextValue(whole, "key ", kLimits, &consumed).outcome == QuickOutcome::kUnusual);
  // Keys of every length, differing in any one byte, are told apart.
  for (std::size_t length = 1; length <= 40; ++length) {
    const std::string key(length, 'k');
    const std::string reply = "VALUE " + key + " 0 1\r\nx\r\n";
    CHECK(QuickTextValue(reply, key, kLimits, &consumed).outcome == QuickOutcome::kDone);
    for (std::size_t at = 0; at < length; ++at) {
      std::string other = key;
      other[at] = 'j';
      INFO("length " << length << ", byte " << at);
      CHECK(QuickTextValue(reply, other, kLimits, &consumed).outcome == QuickOutcome::kUnusual);
    }
  }
}

TEST_CASE("text batch: mutated replies are judged as the general parser judges them",
          "[memcached][batch]") {
  // A valid reply, then thousands of copies with bytes changed, cut short or
  // split anywhere: the batch (which reads usual hits without the parser) must
  // agree with the reference built on the parser alone. A fixed seed keeps
  // every run the same.
  const std::vector<std::string> keys = {"k1", "key2", "k3", "a-longer-key-04"};
  const std::string valid =
      "VALUE k1 0 2 11\r\nab\r\nVALUE k3 7 0\r\n\r\n"
      "VALUE a-longer-key-04 4294967295 5 18446744073709551615\r\nx\r\ny\r\nEND\r\n";
  REQUIRE(SameCodes(Run(keys, valid, {}), Reference(keys, valid)));
  const std::string alphabet = "0123456789 \r\nVALUEND-k14y";
  std::mt19937 random(20261130);
  for (int trial = 0; trial < 10000; ++trial) {
    const std::string reply = test::MutatedReply(valid, alphabet, random);
    const std::size_t cut = random() % (reply.size() + 1);
    INFO("reply '" << reply << "' cut at " << cut);
    const BatchOutcome expected = Reference(keys, reply);
    CHECK(SameCodes(Run(keys, reply, {}), expected));
    CHECK(SameCodes(Run(keys, reply, {cut}), expected));
  }
}

}  // namespace cachet::memcached
