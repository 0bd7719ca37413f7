// MgetBatch without a server: the MGET it sends, and its reply read in pieces
// split at every offset, an error reply in place of the array, a wrong header,
// and reads left unanswered.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/net/read_buffer.h"
#include "mget_batch.h"
#include "resp_encoder.h"

using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::net::ReadBuffer;
using cachet::redis::MgetBatch;

namespace {

// The limits of a RESP3 (HELLO 3) connection, where pushes may come.
cachet::redis::RespLimits Resp3() {
  cachet::redis::RespLimits limits;
  limits.resp3 = true;
  return limits;
}

struct Reads {
  std::array<Operation, 3> ops;
  MgetBatch batch;

  explicit Reads(cachet::redis::RespLimits limits = Resp3()) : batch("127.0.0.1:6379", limits) {
    const char* keys[] = {"a", "bb", "c"};
    for (std::size_t i = 0; i < ops.size(); ++i) {
      ops[i].kind = OpKind::kGet;
      ops[i].key = keys[i];
      batch.Add(ops[i]);
    }
    batch.Seal();
  }
};

void Append(ReadBuffer& buffer, std::string_view bytes) {
  char* at = buffer.PrepareWrite(bytes.size());
  std::memcpy(at, bytes.data(), bytes.size());
  buffer.Commit(bytes.size());
}

// Feeds `reply` to `batch` in two pieces cut at `split`, and checks that the
// batch is done with every byte consumed.
void ConsumeSplit(MgetBatch& batch, std::string_view reply, std::size_t split) {
  ReadBuffer buffer;
  Append(buffer, reply.substr(0, split));
  REQUIRE(batch.Consume(buffer).ok());
  Append(buffer, reply.substr(split));
  REQUIRE(batch.Consume(buffer).ok());
  REQUIRE(batch.done());
  CHECK(buffer.empty());
}

}  // namespace

TEST_CASE("a batch of gets is one MGET", "[mget]") {
  Reads reads;
  CHECK(reads.batch.request() == "*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$2\r\nbb\r\n$1\r\nc\r\n");
}

TEST_CASE("an MGET reply split at every offset gives every read its value or miss", "[mget]") {
  const std::string reply = "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyz\r\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    Reads reads;
    ConsumeSplit(reads.batch, reply, split);
    CHECK(reads.ops[0].status.ok());
    CHECK(reads.ops[0].result.value == "x");
    CHECK(reads.ops[1].status.IsNotFound());
    CHECK(reads.ops[2].status.ok());
    CHECK(reads.ops[2].result.value == "yz");
  }
}

TEST_CASE("an error in place of the MGET array is every read's error", "[mget]") {
  Reads reads;
  ReadBuffer buffer;
  Append(buffer, "-LOADING Redis is loading the dataset in memory\r\n");
  REQUIRE(reads.batch.Consume(buffer).ok());
  CHECK(reads.batch.done());
  for (const Operation& op : reads.ops) CHECK(op.status.IsUnavailable());
}

TEST_CASE("an MGET array of the wrong size is a protocol error", "[mget]") {
  Reads reads;
  ReadBuffer buffer;
  Append(buffer, "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
  CHECK(reads.batch.Consume(buffer).IsProtocolError());
}

TEST_CASE("an MGET array header too short to hold a count is a protocol error", "[mget]") {
  for (const char* header : {"*\n", "*\r\n", "*3\n", "*\r\r\n"}) {
    INFO(header);
    Reads reads;
    ReadBuffer buffer;
    Append(buffer, header);
    CHECK(reads.batch.Consume(buffer).IsProtocolError());
  }
}

TEST_CASE("reads an MGET reply did not reach are settled with the exchange's error", "[mget]") {
  Reads reads;
  ReadBuffer buffer;
  Append(buffer, "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\ny");
  REQUIRE(reads.batch.Consume(buffer).ok());
  CHECK_FALSE(reads.batch.done());
  reads.batch.Settle(Status::Timeout("read timed out"));
  CHECK(reads.ops[0].status.ok());
  CHECK(reads.ops[1].status.IsNotFound());
  CHECK(reads.ops[2].status.IsTimeout());
}

namespace {

// Delivers `bytes` as a connection does: each receive takes at most `chunk`
// bytes and what the buffer's writable region (or a direct read) allows, and
// the batch consumes after each.
Status Deliver(ReadBuffer& buffer, MgetBatch& batch, std::string_view bytes, std::size_t chunk) {
  // Bounded: every round moves at least one byte.
  const std::size_t rounds = bytes.size();
  for (std::size_t round = 0; !bytes.empty() && round < rounds; ++round) {
    char* at = buffer.PrepareWrite(chunk);
    const std::size_t n = std::min({buffer.writable(), chunk, bytes.size()});
    std::memcpy(at, bytes.data(), n);
    buffer.Commit(n);
    bytes.remove_prefix(n);
    if (Status s = batch.Consume(buffer); !s.ok()) return s;
  }
  return Status::OK();
}

std::string Bulk(const std::string& value) {
  return "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

}  // namespace

TEST_CASE("large MGET values are received straight into the reads' strings", "[mget][direct]") {
  std::string big_a(100 * 1024, 'a');
  std::string big_c(70 * 1024, 'c');
  for (std::size_t i = 0; i < big_a.size(); i += 97) big_a[i] = static_cast<char>(i % 251);
  const std::string reply = "*3\r\n" + Bulk(big_a) + "$-1\r\n" + Bulk(big_c);
  for (std::size_t chunk : {1000, 4096, 65536, 300000}) {
    INFO("chunk " << chunk);
    Reads reads;
    // The first read's buffer is reused as it is: same size, no reallocation.
    reads.ops[0].result.value.assign(big_a.size(), '?');
    const char* reused = reads.ops[0].result.value.data();
    ReadBuffer buffer;
    REQUIRE(Deliver(buffer, reads.batch, reply, chunk).ok());
    REQUIRE(reads.batch.done());
    CHECK(buffer.empty());
    CHECK(buffer.owed() == 0);
    CHECK(reads.ops[0].status.ok());
    CHECK(reads.ops[0].result.value == big_a);
    CHECK(static_cast<const void*>(reads.ops[0].result.value.data()) ==
          static_cast<const void*>(reused));
    CHECK(reads.ops[1].status.IsNotFound());
    CHECK(reads.ops[2].status.ok());
    CHECK(reads.ops[2].result.value == big_c);
  }
}

TEST_CASE("a large value cut short or badly ended is never a hit", "[mget][direct]") {
  const std::string big(64 * 1024, 'v');
  const std::string whole = "*3\r\n" + Bulk(big) + "$-1\r\n$-1\r\n";
  SECTION("the connection fails inside the value") {
    Reads reads;
    ReadBuffer buffer;
    REQUIRE(Deliver(buffer, reads.batch, std::string_view(whole).substr(0, 30000), 4096).ok());
    CHECK(buffer.owed() > 0);
    reads.batch.Settle(Status::IoError("closed"));
    CHECK_FALSE(reads.ops[0].status.ok());
    CHECK_FALSE(reads.ops[1].status.ok());
  }
  SECTION("the data is not followed by CRLF") {
    Reads reads;
    ReadBuffer buffer;
    std::string bad = whole;
    bad[4 + 8 + big.size()] = 'X';  // "*3\r\n" "$65536\r\n" then the data, then CR
    const Status s = Deliver(buffer, reads.batch, bad, 4096);
    CHECK(s.IsProtocolError());
    CHECK_FALSE(reads.ops[0].status.ok());
  }
}

namespace {

// Reads of keys of many sizes, around the encoder's small-copy and digit steps.
struct ManyReads {
  std::vector<std::string> keys;
  std::vector<Operation> ops;
  MgetBatch batch;

  explicit ManyReads(std::size_t count, cachet::redis::RespLimits limits = {})
      : ops(count), batch("127.0.0.1:6379", limits) {
    for (std::size_t i = 0; i < count; ++i) keys.push_back(std::string(i % 40, 'k') + "#");
    for (std::size_t i = 0; i < count; ++i) {
      ops[i].kind = OpKind::kGet;
      ops[i].key = keys[i];
      batch.Add(ops[i]);
    }
    batch.Seal();
  }
};

}  // namespace

TEST_CASE("an MGET of many keys of every size is the RESP array of its keys", "[mget]") {
  for (std::size_t count : {1, 9, 10, 99, 100, 120}) {
    INFO(count << " keys");
    ManyReads reads(count);
    // Built by hand, not by the encoders the batch shares.
    std::string expected = "*" + std::to_string(count + 1) + "\r\n$4\r\nMGET\r\n";
    for (const std::string& key : reads.keys) {
      expected += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
    }
    CHECK(reads.batch.request() == expected);
  }
  SECTION("long keys") {
    Operation op;
    const std::string key(1234, 'L');
    op.key = key;
    MgetBatch batch("127.0.0.1:6379", {});
    batch.Add(op);
    batch.Seal();
    CHECK(batch.request() == "*2\r\n$4\r\nMGET\r\n$1234\r\n" + key + "\r\n");
  }
}

TEST_CASE("MGET replies with RESP3 nils, empty values and CRLF inside values, split anywhere",
          "[mget]") {
  const std::string reply = "*5\r\n_\r\n$0\r\n\r\n$4\r\na\r\nb\r\n$-1\r\n$3\r\nxyz\r\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    INFO("split at " << split);
    ManyReads reads(5);
    ConsumeSplit(reads.batch, reply, split);
    CHECK(reads.ops[0].status.IsNotFound());
    CHECK(reads.ops[1].status.ok());
    CHECK(reads.ops[1].result.value.empty());
    CHECK(reads.ops[2].status.ok());
    CHECK(reads.ops[2].result.value == "a\r\nb");
    CHECK(reads.ops[3].status.IsNotFound());
    CHECK(reads.ops[4].status.ok());
    CHECK(reads.ops[4].result.value == "xyz");
  }
}

TEST_CASE("an MGET reply delivered a byte at a time reads every element", "[mget]") {
  std::string reply = "*100\r\n";
  for (std::size_t i = 0; i < 100; ++i) {
    reply += i % 3 == 0 ? std::string("$-1\r\n") : Bulk(std::string(i, 'v'));
  }
  ManyReads reads(100);
  ReadBuffer buffer;
  REQUIRE(Deliver(buffer, reads.batch, reply, 1).ok());
  REQUIRE(reads.batch.done());
  for (std::size_t i = 0; i < 100; ++i) {
    INFO("key " << i);
    if (i % 3 == 0) {
      CHECK(reads.ops[i].status.IsNotFound());
    } else {
      CHECK(reads.ops[i].status.ok());
      CHECK(reads.ops[i].result.value == std::string(i, 'v'));
    }
  }
}

TEST_CASE("reused operations end with a plain outcome, as single reads give", "[mget]") {
  Reads reads;
  // Left from an earlier call: outcomes with messages, a value with flags and a token.
  reads.ops[0].status = Status::Timeout("read timed out");
  reads.ops[0].result.value = "old value, longer than the new";
  reads.ops[0].result.flags = 7;
  reads.ops[0].result.cas = 99;
  reads.ops[1].status = Status::NotFound("with a message");
  reads.ops[1].result.value = "kept";
  reads.ops[2].status = Status::NotFound();
  ReadBuffer buffer;
  Append(buffer, "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyz\r\n");
  REQUIRE(reads.batch.Consume(buffer).ok());
  REQUIRE(reads.batch.done());
  CHECK(reads.ops[0].status.ok());
  CHECK(reads.ops[0].status.message().empty());
  CHECK(reads.ops[0].result.value == "x");
  CHECK(reads.ops[0].result.flags == 0);
  CHECK(reads.ops[0].result.cas == 0);
  CHECK(reads.ops[1].status.IsNotFound());
  CHECK(reads.ops[1].status.message().empty());
  CHECK(reads.ops[1].result.value == "kept");  // a miss leaves the item alone
  CHECK(reads.ops[2].status.ok());
  CHECK(reads.ops[2].result.value == "yz");
}

TEST_CASE("an error inside the MGET array is that read's error only", "[mget]") {
  const std::string reply = "*3\r\n$1\r\nx\r\n-WRONGTYPE Operation against a key\r\n$1\r\ny\r\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    INFO("split at " << split);
    Reads reads;
    ConsumeSplit(reads.batch, reply, split);
    CHECK(reads.ops[0].result.value == "x");
    CHECK(reads.ops[1].status.IsInvalidArgument());
    CHECK(reads.ops[1].status.message().find("WRONGTYPE") != std::string_view::npos);
    CHECK(reads.ops[2].status.ok());
    CHECK(reads.ops[2].result.value == "y");
  }
}

TEST_CASE("a bad element in the MGET array fails the exchange, earlier reads keep values",
          "[mget]") {
  struct Case {
    const char* element;
    bool too_large;
  };
  const Case cases[] = {{"$-2\r\n", false},
                        {"$x\r\nab\r\n", false},
                        {"$2\r\nabc\r\n", false},
                        {"$2\nab\r\n", false},
                        {"?\r\n", false},
                        {"$9\r\n123456789\r\n", true},
                        {"$99999999999999999999\r\n", false}};
  for (const Case& c : cases) {
    INFO(c.element);
    cachet::redis::RespLimits limits;
    limits.max_bulk_length = 8;
    ManyReads reads(3, limits);
    ReadBuffer buffer;
    Append(buffer, std::string("*3\r\n$1\r\nx\r\n") + c.element + "$1\r\ny\r\n");
    const Status s = reads.batch.Consume(buffer);
    CHECK(s.IsTooLarge() == c.too_large);
    CHECK(s.IsProtocolError() == !c.too_large);
    CHECK_FALSE(reads.batch.done());
    CHECK(reads.ops[0].status.ok());
    CHECK(reads.ops[0].result.value == "x");
    reads.batch.Settle(s);
    CHECK(reads.ops[1].status.code() == s.code());
    // After a value too large to read the rest are not answered; after a bad element, as it.
    CHECK(reads.ops[2].status.code() == (c.too_large ? cachet::StatusCode::kIoError : s.code()));
  }
}

TEST_CASE("bytes after the MGET reply's last element stay in the buffer", "[mget]") {
  // The header is checked against the count, so a reply with extra elements
  // after a matching header cannot happen; bytes after the last element are the
  // next reply's and stay in the buffer.
  Reads reads;
  ReadBuffer buffer;
  Append(buffer, "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyz\r\n$1\r\nq\r\n");
  REQUIRE(reads.batch.Consume(buffer).ok());
  CHECK(reads.batch.done());
  CHECK(buffer.data() == "$1\r\nq\r\n");
}

TEST_CASE("a whole push right after the MGET reply is taken, a partial one stays", "[mget][push]") {
  const std::string reply = "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyz\r\n";
  const std::string push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n";
  SECTION("whole pushes are consumed, as pushes") {
    Reads reads;
    ReadBuffer buffer;
    Append(buffer, reply + push + push);
    REQUIRE(reads.batch.Consume(buffer).ok());
    CHECK(reads.batch.done());
    CHECK(buffer.empty());
    CHECK(reads.ops[0].result.value == "x");
  }
  SECTION("a reply after the push stays, for the leftover rule") {
    Reads reads;
    ReadBuffer buffer;
    Append(buffer, reply + push + "$1\r\nq\r\n");
    REQUIRE(reads.batch.Consume(buffer).ok());
    CHECK(reads.batch.done());
    CHECK(buffer.data() == "$1\r\nq\r\n");
  }
  SECTION("a partial push stays") {
    Reads reads;
    ReadBuffer buffer;
    Append(buffer, reply + push.substr(0, 10));
    REQUIRE(reads.batch.Consume(buffer).ok());
    CHECK(reads.batch.done());
    CHECK(buffer.data() == push.substr(0, 10));
  }
}

TEST_CASE("a push around an MGET reply on a RESP2 connection is a protocol error", "[mget][push]") {
  const std::string reply = "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyz\r\n";
  const std::string push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n";
  for (const bool before : {true, false}) {
    CAPTURE(before);
    Reads reads(cachet::redis::RespLimits{});
    ReadBuffer buffer;
    Append(buffer, before ? push + reply : reply + push);
    const Status s = reads.batch.Consume(buffer);
    CHECK(s.IsProtocolError());
    CHECK(s.message().find("RESP2") != std::string_view::npos);
  }
}
