// MgetBatch without a server: the MGET it sends, and its reply read in pieces
// split at every offset, an error reply in place of the array, a wrong header,
// and reads left unanswered.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/read_buffer.h"
#include "mget_batch.h"

using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::net::ReadBuffer;
using cachet::redis::MgetBatch;

namespace {

struct Reads {
  std::array<Operation, 3> ops;
  MgetBatch batch{"127.0.0.1:6379", {}};

  Reads() {
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

}  // namespace

TEST_CASE("a batch of gets is one MGET", "[mget]") {
  Reads reads;
  CHECK(reads.batch.request() == "*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$2\r\nbb\r\n$1\r\nc\r\n");
}

TEST_CASE("an MGET reply split at every offset gives every read its value or miss", "[mget]") {
  const std::string reply = "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyz\r\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    Reads reads;
    ReadBuffer buffer;
    Append(buffer, std::string_view(reply).substr(0, split));
    REQUIRE(reads.batch.Consume(buffer).ok());
    Append(buffer, std::string_view(reply).substr(split));
    REQUIRE(reads.batch.Consume(buffer).ok());
    REQUIRE(reads.batch.done());
    CHECK(buffer.empty());
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
