// TakeFrames: the plugin's one loop over the whole RESP frames at the front of
// a connection's buffer, handing each to its reader.
//
// Every reader of Redis bytes runs it: a session's replies (redis_session.h),
// a batch's (redis_batch.h), MGET's elements and the pushes after them
// (mget_batch.h), and the background links' answers and messages
// (background_link.h). Each says only what to do with one frame; the loop
// parses, takes frames off the buffer, stops for more bytes, and words a
// parser failure ("redis host:port: ...", too_large or protocol_error) once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cachet/net/connection.h"
#include "cachet/net/read_buffer.h"
#include "cachet/status.h"
#include "resp_parser.h"

namespace cachet::redis {

// What a reader made of the frame it was handed (the loop's next step).
enum class Frame : std::uint8_t {
  kTaken,  // handled: off the buffer, and on to the next whole frame
  kLast,   // handled: off the buffer, and the loop returns (the reader wants no more now)
  kLeft,   // not the reader's: it stays at the front of the buffer, and the loop returns
};

// The parser's failure (after kError) as a Status naming `where`
// ("redis host:port: ..."): too_large past a limit, protocol_error otherwise.
Status ParserFailure(const RespParser& parser, std::string_view where);

namespace frames_detail {
inline std::string_view WhereOf(std::string_view where) noexcept { return where; }
// A connection's "host:port", made only when a failure needs it.
inline std::string WhereOf(const net::Connection& connection) {
  return connection.address().HostPort();
}
}  // namespace frames_detail

// Hands every whole frame at the front of `buffer` to `on_frame`, a callable
// `Status(RespValue frame, Frame& next)` (`next` is kTaken unless it says
// otherwise), until the buffer holds no whole frame, or the reader says kLast
// or kLeft. A non-ok Status from the reader takes its frame off and ends the
// loop with it. `frame` views the buffer: valid until the next read. `where`
// (a "host:port" or the connection) names the server in a parser failure.
// Returns ok, the reader's error, or the parser's (the stream is then lost).
template <class Where, class OnFrame>
Status TakeFrames(RespParser& parser, net::ReadBuffer& buffer, const Where& where,
                  OnFrame&& on_frame) {
  // Bounded by the buffer: each pass takes one whole frame off it, or returns.
  while (!buffer.empty()) {
    switch (parser.Parse(buffer.data())) {
      case RespParser::Outcome::kReply:
        break;
      case RespParser::Outcome::kNeedMore:
        return Status::OK();
      case RespParser::Outcome::kError:
        return ParserFailure(parser, frames_detail::WhereOf(where));
    }
    Frame next = Frame::kTaken;
    Status handled = on_frame(parser.reply().root(), next);
    if (next == Frame::kLeft) return handled;
    buffer.Consume(parser.consumed());
    if (!handled.ok() || next == Frame::kLast) return handled;
  }
  return Status::OK();
}

}  // namespace cachet::redis
