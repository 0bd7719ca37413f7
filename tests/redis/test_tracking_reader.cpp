// The tracking link's reader (invalidation_tracker.h) fed RESP3 bytes, without
// a server: invalidate pushes reach the listener, a null invalidate drops
// everything, PONGs are counted against PINGs, and anything else is an error.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "invalidation_tracker.h"
#include "resp_parser.h"

using cachet::Status;
using cachet::redis::RespParser;
using cachet::redis::TrackingReader;

namespace {

class Recorder final : public cachet::InvalidationListener {
 public:
  void OnInvalidate(std::span<const std::string_view> keys) noexcept override {
    for (const std::string_view key : keys) this->keys.emplace_back(key);
  }
  void OnInvalidateAll() noexcept override { ++all; }
  void OnTrackingLive(bool) noexcept override {}

  std::vector<std::string> keys;
  int all = 0;
};

// Parses one whole reply from `bytes` and hands it to `reader`.
Status Feed(TrackingReader& reader, std::string_view bytes) {
  cachet::redis::RespLimits resp3;  // tracking links are RESP3: pushes come
  resp3.resp3 = true;
  RespParser parser(resp3);
  REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
  REQUIRE(parser.consumed() == bytes.size());
  return reader.Handle(parser.reply().root());
}

}  // namespace

TEST_CASE("tracking reader: invalidations and a flush reach the listener", "[unit][near][redis]") {
  Recorder recorder;
  TrackingReader reader(&recorder, "127.0.0.1:1");
  CHECK(Feed(reader, ">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\nt:a\r\n$3\r\nt:b\r\n").ok());
  CHECK(recorder.keys == std::vector<std::string>{"t:a", "t:b"});
  CHECK(recorder.all == 0);
  CHECK(Feed(reader, ">2\r\n$10\r\ninvalidate\r\n_\r\n").ok());  // FLUSHALL
  CHECK(recorder.all == 1);
}

TEST_CASE("tracking reader: a PONG only answers a PING", "[unit][near][redis]") {
  Recorder recorder;
  TrackingReader reader(&recorder, "127.0.0.1:1");
  CHECK_FALSE(Feed(reader, "+PONG\r\n").ok());  // none outstanding
  reader.PingSent();
  CHECK(reader.pongs_due() == 1);
  CHECK(Feed(reader, "+PONG\r\n").ok());
  CHECK(reader.pongs_due() == 0);
  reader.PingSent();
  CHECK_FALSE(Feed(reader, "+OK\r\n").ok());  // not the answer to a PING
  reader.PingSent();
  CHECK_FALSE(Feed(reader, ":1\r\n").ok());
}

TEST_CASE("tracking reader: anything unaccounted is an error", "[unit][near][redis]") {
  Recorder recorder;
  TrackingReader reader(&recorder, "127.0.0.1:1");
  const char* const bad[] = {
      ">2\r\n$7\r\nmessage\r\n$1\r\nx\r\n",       // another push
      ">1\r\n$10\r\ninvalidate\r\n",              // no keys
      ">3\r\n$10\r\ninvalidate\r\n*0\r\n*0\r\n",  // too many parts
      ">2\r\n$10\r\ninvalidate\r\n*1\r\n:5\r\n",  // a non-string key
      ">2\r\n$10\r\ninvalidate\r\n:5\r\n",        // neither keys nor null
      "-ERR something\r\n",                       // an error reply
  };
  for (const char* bytes : bad) {
    INFO(bytes);
    CHECK_FALSE(Feed(reader, bytes).ok());
  }
  CHECK(recorder.keys.empty());
  CHECK(recorder.all == 0);
}
