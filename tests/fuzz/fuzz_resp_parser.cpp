// libFuzzer target for the RESP2/RESP3 reply parser and what reads its replies
// from a server (the cluster slot map, MOVED/ASK). Any bytes, parsed whole and
// then fed in two pieces, must give the same replies, each inside the input,
// every node's text inside its reply; parsing ends in need-more or an error
// within a bounded number of replies. Whatever the MGET element reader
// (whole_bulk.h) takes at the start of a reply, the parser reads the same way.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_slots.h"
#include "resp_parser.h"
#include "whole_bulk.h"

namespace redis = cachet::redis;

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

// Small limits, so the fuzzer reaches them.
redis::RespLimits SmallLimits() {
  redis::RespLimits limits;
  limits.max_bulk_length = 1024;
  limits.max_line_length = 256;
  limits.max_depth = 4;
  limits.max_elements = 64;
  limits.max_nodes = 256;
  limits.resp3 = true;  // pushes parsed too (on RESP2 the '>' line alone is refused)
  return limits;
}

// Visits every node below `value`, checking its text lies inside `bytes`.
void Walk(redis::RespValue value, std::string_view bytes, std::size_t* visited) {
  ++*visited;
  Check(*visited <= 1024);
  std::string_view text = value.text();
  if (!text.empty()) {
    Check(text.data() >= bytes.data() && text.data() + text.size() <= bytes.data() + bytes.size());
  }
  if (value.IsError()) (void)redis::ParseRedirect(text, "127.0.0.1");
  std::size_t children = 0;
  for (redis::RespValue child : value) {
    Walk(child, bytes, visited);
    ++children;
  }
  Check(children == value.size());
}

// The replies in `input`, as their encoded bytes, parsing until need-more or an
// error. `split` > 0 feeds the first `split` bytes before the rest.
std::vector<std::string> ParseAll(std::string_view input, std::size_t split, bool* failed) {
  redis::RespParser parser(SmallLimits());
  std::vector<std::string> replies;
  std::size_t offset = 0;
  // Each reply consumes at least 3 bytes, so the input bounds the loop.
  for (std::size_t guard = 0; guard <= input.size(); ++guard) {
    std::string_view rest = input.substr(offset);
    std::size_t visible = split > offset ? split - offset : rest.size();
    redis::WholeBulk element;
    const bool whole = redis::ReadWholeBulk(rest.substr(0, visible), SmallLimits(), &element);
    redis::RespParser::Outcome outcome = parser.Parse(rest.substr(0, visible));
    if (outcome == redis::RespParser::Outcome::kNeedMore && visible < rest.size()) {
      outcome = parser.Parse(rest);
    }
    // An element the fast reader took whole is one the parser reads.
    Check(!whole || outcome == redis::RespParser::Outcome::kReply);
    if (outcome == redis::RespParser::Outcome::kError) {
      Check(parser.error().IsProtocolError() || parser.error().IsTooLarge());
      *failed = true;
      return replies;
    }
    if (outcome == redis::RespParser::Outcome::kNeedMore) return replies;
    Check(parser.consumed() > 0 && parser.consumed() <= rest.size());
    const redis::RespReply& reply = parser.reply();
    Check(reply.bytes().size() == parser.consumed());
    if (whole) {
      Check(element.size == parser.consumed());
      Check(element.nil == reply.root().IsNull());
      Check(element.data == reply.root().text());
    }
    std::size_t visited = 0;
    Walk(reply.root(), rest.substr(0, parser.consumed()), &visited);
    redis::SlotMap map;
    for (redis::NodePort port_kind : {redis::NodePort::kPlain, redis::NodePort::kTls}) {
      (void)redis::SlotMap::FromShards(reply.root(), "127.0.0.1", port_kind, &map);
    }
    (void)redis::SlotMap::FromSlots(reply.root(), "127.0.0.1", &map);
    replies.emplace_back(reply.bytes());
    offset += parser.consumed();
  }
  std::abort();  // more replies than bytes: the parser consumed nothing
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t split = input.empty() ? 0 : data[0] % (input.size() + 1);
  bool whole_failed = false, split_failed = false;
  std::vector<std::string> whole = ParseAll(input, 0, &whole_failed);
  std::vector<std::string> pieces = ParseAll(input, split, &split_failed);
  Check(whole == pieces);
  Check(whole_failed == split_failed);
  return 0;
}
