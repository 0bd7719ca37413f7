// Fuzz target: the memcached text and meta reply parsers on arbitrary bytes.
// Each reply they accept must lie inside the input, and parsing must end in
// need-more or an error within a bounded number of replies.
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
    input.remove_prefix(r.consumed);
  }
  std::abort();  // more replies than bytes: a parser consumed nothing
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  cachet::memcached::ParserLimits limits{256, 4096};
  ParseAll(cachet::memcached::TextReplyParser(limits), input);
  ParseAll(cachet::memcached::MetaReplyParser(limits), input);
  return 0;
}
