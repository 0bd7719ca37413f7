// MgetBatch without a server: the MGET it sends, and its reply read in pieces
// split at every offset, an error reply in place of the array, a wrong header,
// and reads left unanswered.
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
