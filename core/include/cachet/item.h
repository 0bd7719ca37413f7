// Item: what a store keeps under a key. Bytes, 32-bit flags and a CAS token.
//
// The store never interprets value bytes. `flags` records how the Codec encoded the
// value (see codec.h and docs/value-format.md); `cas` is the store's version token,
// 0 when the store has none. An Item owns its bytes; an ItemView borrows them and
// must not outlive them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cachet {

// Time to live. Zero means "never expires". Stores with second resolution round up.
using Ttl = std::chrono::milliseconds;

struct Item {
  std::string value;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
};

struct ItemView {
  std::string_view value;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;  // the expected token, for StoreMode::kCas

  ItemView() = default;
  ItemView(std::string_view v, std::uint32_t f = 0, std::uint64_t c = 0)  // NOLINT
      : value(v), flags(f), cas(c) {}
  ItemView(const Item& item)  // NOLINT: viewing an Item is always safe
      : value(item.value), flags(item.flags), cas(item.cas) {}
};

// Server statistics as name/value pairs, in the order the store reports them.
// Multi-server stores prefix each name with "host:port ".
using StatsMap = std::vector<std::pair<std::string, std::string>>;

}  // namespace cachet
