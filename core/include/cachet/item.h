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

// Time to live. Zero means "never expires"; a negative TTL is refused with
// kInvalidArgument by every operation that takes one, and nothing is stored or
// changed. Stores with second resolution round up. An expiry later than a store
// can represent is stored as no expiry: the item outlives the store's limit anyway.
using Ttl = std::chrono::milliseconds;

// `seconds` as a Ttl, saturating at Ttl::max() instead of overflowing.
constexpr Ttl TtlFromSeconds(std::int64_t seconds) noexcept {
  constexpr std::int64_t kLargest = Ttl::max().count() / 1000;
  if (seconds > kLargest) return Ttl::max();
  if (seconds < -kLargest) return Ttl::min();
  return Ttl{seconds * 1000};
}

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
