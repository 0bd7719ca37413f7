// The meta reader's usual path (UsualMetaReply, meta_usual.h) without a server:
// the replies memcached sends to cachet's commands, as memcached 1.6 spells
// them, are parsed into exactly the Reply the general parser makes; anything
// else (errors, flags in another order or not asked for, over-limit sizes,
// bad numbers, a reply still arriving) is left to the general parser; and the
// meta reader, a single operation's or a batch's, ends the same with and
// without the usual path, whole or split anywhere.
#include <algorithm>
#include <catch2/catch.hpp>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "cachet/net/read_buffer.h"
#include "meta_batch.h"
#include "meta_parser.h"
#include "meta_usual.h"
#include "support/mutated_reply.h"

namespace cachet::memcached {
namespace {

const ParserLimits kLimits{2048, 1024 * 1024};

// Replies to cachet's commands (mg ... v f c k O0, ma ... v O0, ms, md, touch, a
// quiet batch's MN; binary keys have no k) as memcached 1.6.18 spells them. Each
// was seen from it, but three made up in its spelling: the largest token, the
// largest flags and cas, and EX.
const std::vector<std::string> kServerReplies = {
    "VA 5 f7 c1 kkey1 O0\r\nhello\r\n",
    "VA 0 f0 c2 kkey1 O0\r\n\r\n",
    "VA 1 f0 c6 O4294967295\r\nx\r\n",
    "VA 5 f4294967295 c18446744073709551615 kk O3\r\nhello\r\n",
    "EN knokey O3\r\n",
    "EN O0\r\n",
    "HD O0\r\n",
    "NS O0\r\n",
    "EX O0\r\n",
    "NF O0\r\n",
    "VA 1 O0\r\n8\r\n",
    "VA 20 O0\r\n18446744073709551615\r\n",
    "MN\r\n",
};

bool SameReply(const Reply& a, const Reply& b) {
  return a.kind == b.kind && a.key == b.key && a.data == b.data && a.text == b.text &&
         a.flags == b.flags && a.cas == b.cas && a.opaque == b.opaque &&
         a.has_opaque == b.has_opaque && a.win == b.win && a.win_taken == b.win_taken &&
         a.stale == b.stale;
}

// What the reader made of a reply.
struct Outcome {
  StatusCode stream = StatusCode::kOk;
  bool done = false;
  bool poisoned = false;
  std::vector<std::string> ops;  // each operation's status, value, flags, cas, counter

  bool operator==(const Outcome&) const = default;
};

std::string Describe(const Operation& op, const Item& item) {
  // A protocol error's message quotes the bytes at hand; its code is what counts.
  if (op.status.IsProtocolError()) return "protocol_error";
  std::string out = op.status.ToString();
  if (op.status.ok()) {
    out += " '" + item.value + "' " + std::to_string(item.flags) + " " + std::to_string(item.cas) +
           " " + std::to_string(op.counter);
  }
  return out;
}

// How Read() sends its commands.
struct Shape {
  bool noreply = false;
  bool batch_of_one = false;  // one command in a batch (q, then mn), not alone
  bool binary_keys = false;
  std::string first_key = "k0";  // the others are k1, k2...
};

// Reads `reply` for `kinds` (a single operation's reader for one, unless
// shape.batch_of_one, else a batch), with or without the usual path, in the
// pieces `cuts` makes, as an exchange does.
Outcome Read(bool usual, const std::vector<OpKind>& kinds, std::string_view reply,
             const std::vector<std::size_t>& cuts, const Shape& shape = {}) {
  std::deque<Operation> ops(kinds.size());
  std::deque<std::string> keys;
  MetaBatch batch(kLimits, usual);
  Item lent;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    ops[i].kind = kinds[i];
    ops[i].key = keys.emplace_back(i == 0 ? shape.first_key : "k" + std::to_string(i));
    ops[i].noreply = shape.noreply;
  }
  BatchSettings settings;
  settings.binary_keys = shape.binary_keys;
  const bool alone = kinds.size() == 1 && !shape.batch_of_one;
  if (alone) {
    batch.ExpectOne(ops[0], settings, &lent);
  } else {
    batch.Reset(settings);
    for (Operation& op : ops) batch.Add(op);
    batch.Finish();
  }
  net::ReadBuffer buffer;
  Status stream;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= cuts.size() && stream.ok() && !batch.done(); ++i) {
    const std::size_t to = i < cuts.size() ? cuts[i] : reply.size();
    while (from < to && stream.ok() && !batch.done()) {
      char* dest = buffer.PrepareWrite(64);
      const std::size_t n = std::min(buffer.writable(), to - from);
      reply.copy(dest, n, from);
      buffer.Commit(n);
      from += n;
      stream = batch.Consume(buffer);
    }
  }
  Outcome out;
  out.done = batch.done();
  if (stream.ok() && out.done && !buffer.empty()) stream = Status::ProtocolError("bytes after");
  out.stream = stream.code();
  batch.Settle(out.done || !stream.ok() ? stream : Status::Timeout("cut short"));
  out.poisoned = batch.poisoned();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const bool lent_hit = alone && ops[i].kind == OpKind::kGet;
    out.ops.push_back(Describe(ops[i], lent_hit ? lent : ops[i].result));
  }
  return out;
}

// Read() with and without the usual path, whole and split at every offset:
// both must end alike, however the bytes arrive (a reader done before the
// bytes after its reply arrived does not see them). Returns the whole reply's
// outcome.
Outcome SameBothWays(const std::vector<OpKind>& kinds, const std::string& reply,
                     const Shape& shape = {}) {
  const Outcome general = Read(false, kinds, reply, {}, shape);
  CHECK(Read(true, kinds, reply, {}, shape) == general);
  for (std::size_t cut = 1; cut < reply.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK(Read(true, kinds, reply, {cut}, shape) == Read(false, kinds, reply, {cut}, shape));
  }
  return general;
}

}  // namespace

TEST_CASE("meta usual: memcached's replies are parsed as the general parser parses them",
          "[memcached][meta]") {
  const MetaReplyParser parser(kLimits);
  for (const std::string& reply : kServerReplies) {
    INFO("reply '" << reply << "'");
    // Whatever follows the reply is not looked at.
    for (const std::string& input : {reply, reply + "HD O1\r\n", reply + "VA 9"}) {
      Reply usual;
      const std::size_t taken = UsualMetaReply(input, kLimits, "", &usual);
      CHECK(taken == reply.size());
      Reply general;
      const ParseResult parsed = parser.Parse(input, &general);
      REQUIRE(parsed.outcome == ParseOutcome::kReply);
      CHECK(parsed.consumed == taken);
      CHECK(SameReply(usual, general));
    }
  }
  Reply hit;
  REQUIRE(UsualMetaReply("VA 5 f7 c1 kkey1 O12\r\nhello\r\n", kLimits, "", &hit) != 0);
  CHECK(hit.kind == ReplyKind::kMetaValue);
  CHECK(hit.data == "hello");
  CHECK(hit.flags == 7);
  CHECK(hit.cas == 1);
  CHECK(hit.key == "key1");
  CHECK(hit.opaque == 12);
}

TEST_CASE("meta usual: given the key expected, only a reply naming it is taken",
          "[memcached][meta]") {
  const std::string hit = "VA 5 f7 c1 kkey1 O0\r\nhello\r\n";
  Reply usual;
  CHECK(UsualMetaReply(hit, kLimits, "key1", &usual) == hit.size());
  CHECK(usual.key == "key1");
  for (const char* other : {"key2", "key", "key10", "kex1", "k", "Key1"}) {
    INFO("expected " << other);
    Reply reply;
    CHECK(UsualMetaReply(hit, kLimits, other, &reply) == 0);
  }
  // A reply that names no key is taken whatever key is expected.
  Reply header;
  CHECK(UsualMetaReply("HD O0\r\n", kLimits, "key1", &header) == 7);
  // Keys of every length, differing in any one byte, are told apart.
  for (std::size_t length = 1; length <= 40; ++length) {
    const std::string key(length, 'k');
    const std::string reply = "EN k" + key + " O0\r\n";
    Reply miss;
    CHECK(UsualMetaReply(reply, kLimits, key, &miss) == reply.size());
    for (std::size_t at = 0; at < length; ++at) {
      std::string other = key;
      other[at] = 'j';
      INFO("length " << length << ", byte " << at);
      Reply wrong;
      CHECK(UsualMetaReply(reply, kLimits, other, &wrong) == 0);
    }
  }
}

TEST_CASE("meta usual: a reply still arriving is not taken", "[memcached][meta]") {
  for (const std::string& reply : kServerReplies) {
    for (std::size_t size = 0; size < reply.size(); ++size) {
      INFO("the first " << size << " bytes of '" << reply << "'");
      Reply usual;
      CHECK(UsualMetaReply(std::string_view(reply).substr(0, size), kLimits, "", &usual) == 0);
    }
  }
}

TEST_CASE("meta usual: anything else is left to the general parser", "[memcached][meta]") {
  const std::vector<std::string> unusual = {
      "ERROR\r\n",
      "CLIENT_ERROR bad data chunk\r\n",
      "SERVER_ERROR out of memory\r\n",
      "VA 5 c1 f7 O0\r\nhello\r\n",   // flags in another order
      "VA 5 O0 kk\r\nhello\r\n",      // k after O
      "VA 5 f7 f8 O0\r\nhello\r\n",   // a flag twice
      "VA 5 f7 t-1 O0\r\nhello\r\n",  // a flag not asked for
      "VA 0 f0 c5 W O0\r\n\r\n",      // a lease's placeholder
      "VA 5 f7 X W O0\r\nhello\r\n",  // stale
      "HD O0 b\r\n",                  // a flag after O
      "HD O0 \r\n",                   // a trailing space
      "HD  O0\r\n",                   // two spaces
      "HD\r\n",                       // no O
      "HDX O0\r\n",                   // codes memcached does not send
      "hd O0\r\n",
      "MN O0\r\n",
      "MNX\r\n",
      "VA 5f7 O0\r\nhello\r\n",                   // no space
      "VA O0\r\n\r\n",                            // no size
      "VA 5 f4294967296 O0\r\nhello\r\n",         // flags over 32 bits
      "HD O4294967296\r\n",                       // opaque over 32 bits
      "VA 1 c18446744073709551616 O0\r\nx\r\n",   // cas over 64 bits
      "VA 1 c000000000000000000001 O0\r\nx\r\n",  // 21 digits
      "HD O\r\n",                                 // tokens that are no number
      "HD Ox\r\n",
      "HD O-1\r\n",
      "HD O+1\r\n",
      "EN k O0\r\n",      // an empty key
      "EN ka\nb O0\r\n",  // a control byte in the key
      "EN ka\rb O0\r\n",
      "HD O0\n",  // a bare newline, a line not ended
      "HD O0\r",
      "HD O0\rx",
      "VA 5 O0\r\nhelloXY",  // a data block not ended by \r\n
      "VA 5 O0\r\nhello\n\r",
      "VA 3 O0\r\nhello\r\n",  // a data block too long for its size
  };
  for (const std::string& reply : unusual) {
    INFO("reply '" << reply << "'");
    Reply usual;
    CHECK(UsualMetaReply(reply, kLimits, "", &usual) == 0);
  }
  // Over the limits: the general parser's to refuse.
  const std::string hit = "VA 5 f7 c1 kkey1 O0\r\nhello\r\n";
  Reply usual;
  CHECK(UsualMetaReply(hit, ParserLimits{18, 5}, "", &usual) == 0);
  CHECK(UsualMetaReply(hit, ParserLimits{19, 4}, "", &usual) == 0);
  Reply exact;
  CHECK(UsualMetaReply(hit, ParserLimits{19, 5}, "", &exact) == hit.size());
  // MN's line too: the general parser refuses it as too long under max_line 1.
  Reply parsed;
  CHECK(MetaReplyParser(ParserLimits{1, 5}).Parse("MN\r\n", &parsed).outcome == ParseOutcome::kError);
  CHECK(UsualMetaReply("MN\r\n", ParserLimits{1, 5}, "", &usual) == 0);
  Reply noop;
  CHECK(UsualMetaReply("MN\r\n", ParserLimits{2, 5}, "", &noop) == 4);
}

TEST_CASE("meta usual: a single operation's reader ends the same with and without it",
          "[memcached][meta]") {
  // Usual replies, and ones that only look usual.
  const std::vector<std::pair<OpKind, std::string>> replies = {
      {OpKind::kGet, "VA 5 f7 c1 kk0 O0\r\nhello\r\n"},
      {OpKind::kGet, "EN kk0 O0\r\n"},
      {OpKind::kGet, "VA 5 f7 c1 kother O0\r\nhello\r\n"},        // another key
      {OpKind::kGet, "VA 5 f7 c1 kk0 O1\r\nhello\r\n"},           // another token
      {OpKind::kGet, "HD O0\r\n"},                                // a reply mg v never gets
      {OpKind::kGet, "VA 5 f7 c1 kk0 O0\r\nhello\r\nEN O0\r\n"},  // a second reply
      {OpKind::kGet, "VA 2000000 O0\r\nab\r\n"},                  // over max_value
      {OpKind::kStore, "HD O0\r\n"},
      {OpKind::kStore, "NS O0\r\n"},
      {OpKind::kStore, "EX O0\r\n"},
      {OpKind::kStore, "NF O0\r\n"},
      {OpKind::kStore, "VA 1 O0\r\nx\r\n"},
      {OpKind::kRemove, "HD O0\r\n"},
      {OpKind::kRemove, "NF O0\r\n"},
      {OpKind::kRemove, "MN\r\n"},  // an mn nobody sent
      {OpKind::kIncr, "VA 2 O0\r\n42\r\n"},
      {OpKind::kIncr, "VA 2 O0\r\n4x\r\n"},  // a counter that is no number
      {OpKind::kDecr, "NF O0\r\n"},
      {OpKind::kTouch, "HD O0\r\n"},
      {OpKind::kTouch, "EN O0\r\n"},
      {OpKind::kIncr, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"},
  };
  for (const auto& [kind, reply] : replies) {
    INFO("reply '" << reply << "'");
    SameBothWays({kind}, reply);
  }
  CHECK(SameBothWays({OpKind::kGet}, replies[0].second).ops[0] == "ok 'hello' 7 1 0");
  CHECK(SameBothWays({OpKind::kGet}, replies[2].second).stream == StatusCode::kProtocolError);
  // noreply: quiet, then MN.
  CHECK(SameBothWays({OpKind::kStore}, "MN\r\n", {.noreply = true}).ops[0].starts_with("ok"));
  CHECK(SameBothWays({OpKind::kStore}, "NS O0\r\nMN\r\n", {.noreply = true})
            .ops[0]
            .starts_with("not_stored"));
}

TEST_CASE("meta usual: a get's returned key is compared whatever its length", "[memcached][meta]") {
  // 1 byte, 4-byte words, 8-byte words ending on one and overlapping the last.
  for (const std::string key : {"k", "user:42", "user:profile:42", "user:profile:4242"}) {
    std::string other = key;
    other.back() ^= 1;
    INFO("key " << key);
    const std::string hit = "VA 5 f7 c1 k" + key + " O0\r\nhello\r\n";
    const std::string wrong = "VA 5 f7 c1 k" + other + " O0\r\nhello\r\n";
    CHECK(SameBothWays({OpKind::kGet}, hit, {.first_key = key}).ops[0] == "ok 'hello' 7 1 0");
    CHECK(SameBothWays({OpKind::kGet}, wrong, {.first_key = key}).stream ==
          StatusCode::kProtocolError);
    // A batch of one quiet get, then mn: its key is compared too.
    const Shape one{.batch_of_one = true, .first_key = key};
    CHECK(SameBothWays({OpKind::kGet}, hit + "MN\r\n", one).ops[0] == "ok 'hello' 7 1 0");
    CHECK(SameBothWays({OpKind::kGet}, wrong + "MN\r\n", one).stream ==
          StatusCode::kProtocolError);
  }
}

TEST_CASE("meta usual: a batch of one ends the same with and without it", "[memcached][meta]") {
  const Shape one{.batch_of_one = true};
  // A read is quiet (a miss is not sent), a write answers; MN ends the batch.
  CHECK(SameBothWays({OpKind::kGet}, "MN\r\n", one).ops[0].starts_with("not_found"));
  CHECK(SameBothWays({OpKind::kStore}, "HD O0\r\nMN\r\n", one).ops[0].starts_with("ok"));
  CHECK(SameBothWays({OpKind::kStore}, "MN\r\n", one).ops[0].starts_with("protocol_error"));
  CHECK(SameBothWays({OpKind::kStore}, "NS O0\r\nMN\r\n", one).ops[0].starts_with("not_stored"));
  CHECK(SameBothWays({OpKind::kTouch}, "EN O0\r\nMN\r\n", one).ops[0].starts_with("not_found"));
  CHECK(SameBothWays({OpKind::kIncr}, "VA 2 O0\r\n42\r\nMN\r\n", one).ops[0] == "ok '' 0 0 42");
  // An error line, then a usual reply the batch does not expect.
  SameBothWays({OpKind::kGet}, "SERVER_ERROR out of memory\r\nMN\r\n", one);
  SameBothWays({OpKind::kGet}, "VA 5 f7 c1 kk0 O1\r\nhello\r\nMN\r\n", one);
  SameBothWays({OpKind::kGet}, "VA 5 f7 c1 kk0 O0\r\nhello\r\n", one);  // no MN yet
}

TEST_CASE("meta usual: binary keys end the same with and without it", "[memcached][meta]") {
  // Binary keys are not asked back (no k): the reply is matched by its token.
  const Shape binary{.binary_keys = true};
  CHECK(SameBothWays({OpKind::kGet}, "VA 5 f7 c1 O0\r\nhello\r\n", binary).ops[0] ==
        "ok 'hello' 7 1 0");
  CHECK(SameBothWays({OpKind::kGet}, "EN O0\r\n", binary).ops[0].starts_with("not_found"));
  SameBothWays({OpKind::kGet}, "VA 5 f7 c1 kk0 O0\r\nhello\r\n", binary);
  const Shape binary_one{.batch_of_one = true, .binary_keys = true};
  CHECK(SameBothWays({OpKind::kGet}, "VA 2 f1 c2 O0\r\nab\r\nMN\r\n", binary_one).ops[0] ==
        "ok 'ab' 1 2 0");
  const std::vector<OpKind> kinds = {OpKind::kGet, OpKind::kStore, OpKind::kGet};
  const Outcome batch = SameBothWays(
      kinds, "VA 2 f1 c2 O0\r\nab\r\nNS O1\r\nVA 1 f0 c3 O2\r\nx\r\nMN\r\n", binary);
  CHECK(batch.ops[0] == "ok 'ab' 1 2 0");
  CHECK(batch.ops[1].starts_with("not_stored"));
  CHECK(batch.ops[2] == "ok 'x' 0 3 0");
}

TEST_CASE("meta usual: a batch ends the same with and without it", "[memcached][meta]") {
  const std::vector<OpKind> kinds = {OpKind::kGet,  OpKind::kGet,   OpKind::kStore,
                                     OpKind::kIncr, OpKind::kTouch, OpKind::kGet};
  // Quiet gets answer only their hits; the store, touch and counter always answer.
  const std::string valid =
      "VA 2 f1 c2 kk0 O0\r\nab\r\nHD O2\r\nVA 1 O3\r\n9\r\nHD O4\r\nVA 3 f0 c3 kk5 O5\r\n"
      "xyz\r\nMN\r\n";
  const Outcome whole = SameBothWays(kinds, valid);
  CHECK(whole.done);
  CHECK(whole.ops[0] == "ok 'ab' 1 2 0");
  CHECK(whole.ops[1].starts_with("not_found"));
  CHECK(whole.ops[2].starts_with("ok"));
  CHECK(whole.ops[3] == "ok '' 0 0 9");
  CHECK(whole.ops[5] == "ok 'xyz' 0 3 0");
  // Thousands of copies with bytes changed or cut short, split anywhere: a fixed
  // seed keeps every run the same.
  const std::string alphabet = "0123456789 \r\nVAHDENMOkfc";
  std::mt19937 random(20261202);
  for (int trial = 0; trial < 5000; ++trial) {
    const std::string reply = test::MutatedReply(valid, alphabet, random);
    const std::size_t cut = random() % (reply.size() + 1);
    INFO("reply '" << reply << "' cut at " << cut);
    CHECK(Read(true, kinds, reply, {}) == Read(false, kinds, reply, {}));
    CHECK(Read(true, kinds, reply, {cut}) == Read(false, kinds, reply, {cut}));
  }
}

}  // namespace cachet::memcached
