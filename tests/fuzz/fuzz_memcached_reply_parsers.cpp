// Fuzz target: the memcached text and meta reply parsers on arbitrary bytes.
// Each reply they accept must lie inside the input, and parsing must end in
// need-more or an error within a bounded number of replies. Every proper prefix
// of a reply they accept must ask for more (a partial line is refused only when
// it can become no reply). A value header the batches read large values direct
// from must lie inside the input too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "meta_parser.h"
#include "text_parser.h"

namespace {

template <class Parser>
void ParseAll(const Parser& parser, std::string_view input) {
  // Every reply consumes at least one "\n", so the input bounds the loop.
  const std::size_t limit = input.size();
  for (std::size_t guard = 0; guard <= limit; ++guard) {
    cachet::memcached::Reply reply;
    cachet::memcached::ParseResult r = parser.Parse(input, &reply);
    if (r.outcome != cachet::memcached::ParseOutcome::kReply) return;
    if (r.consumed == 0 || r.consumed > input.size()) std::abort();
    if (reply.data.data() != nullptr &&
        (reply.data.data() < input.data() ||
         reply.data.data() + reply.data.size() > input.data() + input.size())) {
      std::abort();
    }
    // Every proper prefix of an accepted reply waits for the rest.
    for (std::size_t cut = 0; cut < r.consumed; ++cut) {
      cachet::memcached::Reply partial;
      if (parser.Parse(input.substr(0, cut), &partial).outcome !=
          cachet::memcached::ParseOutcome::kNeedMore) {
        std::abort();
      }
    }
    input.remove_prefix(r.consumed);
  }
  std::abort();  // more replies than bytes: a parser consumed nothing
}

// A value header (what a direct read is started from) must lie inside the
// input, and its size within the limit.
template <class Parser>
void CheckValueHeader(const Parser& parser, std::string_view input, std::size_t max_value) {
  cachet::memcached::Reply reply;
  std::size_t offset = 0;
  std::uint64_t size = 0;
  if (!parser.ValueHeader(input, &reply, &offset, &size)) return;
  if (offset == 0 || offset > input.size() || size > max_value) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  cachet::memcached::ParserLimits limits{256, 4096};
  ParseAll(cachet::memcached::TextReplyParser(limits), input);
  ParseAll(cachet::memcached::MetaReplyParser(limits), input);
  CheckValueHeader(cachet::memcached::TextReplyParser(limits), input, limits.max_value);
  CheckValueHeader(cachet::memcached::MetaReplyParser(limits), input, limits.max_value);
  return 0;
}
