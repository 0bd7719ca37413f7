// What the memcached reader fuzz targets share: a reply spelled with pieces of
// usual replies, feeding it to a reader as an exchange receives it, and the
// check that two readings of it (usual path and general parser) ended alike.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
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

// Protocol errors quote the bytes at hand; their code is what must agree.
inline bool SameStatus(const Status& a, const Status& b) {
  if (a.IsProtocolError() && b.IsProtocolError()) return true;
  return a.ToString() == b.ToString();
}

// Aborts unless two readings of one reply ended alike: the stream, each
// operation's outcome, and each hit's value, flags and CAS. `Outcome` has
// done, poisoned, stream, ops and items (where each hit went).
template <class Outcome>
void CheckSame(const Outcome& a, const Outcome& b) {
  if (a.done != b.done || a.poisoned != b.poisoned || !SameStatus(a.stream, b.stream)) {
    std::abort();
  }
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const Operation& x = a.ops[i];
    const Operation& y = b.ops[i];
    if (!SameStatus(x.status, y.status)) std::abort();
    if (!x.status.ok()) continue;
    if (x.kind == OpKind::kGet &&
        (a.items[i].value != b.items[i].value || a.items[i].flags != b.items[i].flags ||
         a.items[i].cas != b.items[i].cas)) {
      std::abort();
    }
    if (x.counter != y.counter) std::abort();
  }
}

}  // namespace cachet::memcached::fuzz
