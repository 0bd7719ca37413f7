// RedisBatch without a server: the PING that closes a pipeline of two replies
// or more. A reply sent twice arrives where PONG belongs and fails the batch;
// an error that PING itself gets (the server loading, an ACL or a rename that
// denies PING) leaves the batch's own answers standing.
#include <catch2/catch.hpp>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/net/read_buffer.h"
#include "redis_batch.h"

using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::StoreMode;
using cachet::net::ReadBuffer;
using cachet::redis::RedisBatch;

namespace {

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

// Adds of "a" and "b" (SET NX), `count` of them, in one batch, sealed.
struct Adds {
  std::deque<Operation> ops;
  RedisBatch batch{"127.0.0.1:6379", cachet::redis::RespLimits{},
                   cachet::redis::CounterMode::kNative};

  explicit Adds(std::size_t count) : ops(count) {
    const char* keys[] = {"a", "b"};
    for (std::size_t i = 0; i < count; ++i) {
      ops[i].kind = OpKind::kStore;
      ops[i].mode = StoreMode::kAdd;
      ops[i].key = keys[i];
      ops[i].item = cachet::ItemView("v");
      batch.Add(ops[i]);
    }
    batch.Seal();
  }

  // Feeds `replies` whole, then settles as the engine would.
  Status Answer(std::string_view replies) {
    ReadBuffer buffer;
    std::memcpy(buffer.PrepareWrite(replies.size()), replies.data(), replies.size());
    buffer.Commit(replies.size());
    Status s = batch.Consume(buffer);
    if (s.ok() && !batch.done()) s = Status::Timeout("cut short");
    batch.Settle(s);
    return s;
  }
};

}  // namespace

TEST_CASE("a redis batch of two replies or more ends with PING", "[redis][batch][stream]") {
  CHECK_FALSE(Adds(1).batch.request().ends_with(kPing));
  Adds two(2);
  CHECK(two.batch.request().ends_with(kPing));
  CHECK(two.Answer("+OK\r\n$-1\r\n+PONG\r\n").ok());
  CHECK(two.ops[0].status.ok());
  CHECK(two.ops[1].status.IsNotStored());
  // Without its PONG the exchange is not over.
  Adds waiting(2);
  CHECK(waiting.Answer("+OK\r\n$-1\r\n").IsTimeout());
}

TEST_CASE("a redis reply sent twice in a batch fails it where PONG belongs",
          "[redis][batch][stream]") {
  // b's own answer (nil: not stored) comes after a's OK sent twice.
  Adds adds(2);
  const Status s = adds.Answer("+OK\r\n+OK\r\n$-1\r\n");
  INFO(s.ToString());
  CHECK(s.IsProtocolError());
  CHECK(s.message().find("a reply too many in the batch: null") != std::string_view::npos);
  for (const Operation& op : adds.ops) CHECK(op.status.IsProtocolError());
  // An error no PING gets is another command's too.
  Adds refused(2);
  const Status other = refused.Answer("+OK\r\n+OK\r\n-READONLY You can't write against a "
                                      "read only replica.\r\n");
  CHECK(other.IsProtocolError());
  CHECK(other.message().find("'READONLY") != std::string_view::npos);
  // Nor is an error that only mentions ping, or whose code only begins as one of PING's.
  for (const char* other : {"-ERR unknown command 'EVALSHA', with args beginning with: 'ping' \r\n",
                            "-BUSYKEY Target key name already exists.\r\n"}) {
    INFO(other);
    Adds adds2(2);
    CHECK(adds2.Answer(std::string("+OK\r\n+OK\r\n") + other).IsProtocolError());
  }
  // A status line is no answer to an add but OK.
  Adds pong(2);
  CHECK(pong.Answer("+OK\r\n+PONG\r\n+PONG\r\n").IsProtocolError());
}

TEST_CASE("a PING the server refuses leaves a redis batch's answers standing",
          "[redis][batch][stream]") {
  for (const char* refusal :
       {"-NOPERM this user has no permissions to run the 'ping' command\r\n",
        "-ERR unknown command 'PING', with args beginning with: \r\n",
        "-LOADING Redis is loading the dataset in memory\r\n",
        "-BUSY Redis is busy running a script.\r\n",
        "-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
        "persist to disk.\r\n"}) {
    INFO(refusal);
    Adds adds(2);
    CHECK(adds.Answer(std::string("+OK\r\n$-1\r\n") + refusal).ok());
    CHECK(adds.ops[0].status.ok());
    CHECK(adds.ops[1].status.IsNotStored());
  }
}
