// What the memcached reader fuzz targets share: a reply spelled with pieces of
// usual replies, and feeding it to a reader as an exchange receives it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/net/read_buffer.h"
#include "cachet/status.h"

namespace cachet::memcached::fuzz {

// The reply an input stands for: its bytes, each from 0xe0 up replaced by one
// of `pieces`, so that whole replies, and replies to the wrong command, are
// found quickly.
inline std::string Expand(std::string_view raw, std::span<const std::string_view> pieces) {
  std::string out;
  for (const char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0xe0) {
      out += pieces[(byte - 0xe0) % pieces.size()];
    } else {
      out += c;
    }
  }
  return out;
}

// Feeds `reply` in the pieces `cuts` makes, as an exchange receives it: each
// piece in receives of at most what the buffer offers, the reader consuming
// after each, until it is done or fails; bytes after the reply are an error.
// Then settles the reader with the exchange's status, which it returns; *done
// says whether the reader was done.
template <class Reader>
Status Feed(Reader& reader, std::string_view reply, const std::vector<std::size_t>& cuts,
            bool* done) {
  net::ReadBuffer buffer;
  Status stream;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= cuts.size() && stream.ok() && !reader.done(); ++i) {
    const std::size_t to = i < cuts.size() ? cuts[i] : reply.size();
    while (from < to && stream.ok() && !reader.done()) {
      char* dest = buffer.PrepareWrite(64);
      std::size_t n = buffer.writable();
      if (n > to - from) n = to - from;
      reply.copy(dest, n, from);
      buffer.Commit(n);
      from += n;
      stream = reader.Consume(buffer);
    }
  }
  *done = reader.done();
  if (stream.ok() && *done && !buffer.empty()) stream = Status::ProtocolError("bytes after");
  reader.Settle(*done || !stream.ok() ? stream : Status::Timeout("cut short"));
  return stream;
}

}  // namespace cachet::memcached::fuzz
