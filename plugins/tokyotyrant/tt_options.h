// TokyoTyrantOptions: the [tokyotyrant] config section, parsed (see plugin.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachet/net/distribution.h"
#include "cachet/net/endpoint.h"
#include "cachet/net/server_pool.h"
#include "tt_protocol.h"

namespace cachet::tokyotyrant {

struct TokyoTyrantOptions {
  std::vector<net::ServerAddress> servers;
  net::DistributionKind distribution = net::DistributionKind::kKetama;
  std::uint32_t ketama_points = 160;  // cmf-ketama points per unit of weight
  net::ServerPoolOptions pool;
  // Values larger than this are refused with too_large before anything is sent.
  std::size_t max_item_size = static_cast<std::size_t>(kMaxFieldSize);
  // Keys per mget request; larger get_multi batches are split.
  std::size_t mget_max_keys = static_cast<std::size_t>(kMaxItems);
  // Incr/Decr as addint on Tokyo Tyrant's 4-byte binary counters (off: unsupported,
  // because they are not the decimal-text counters of the generic API).
  bool addint_counters = false;
  // Append as putcat, which creates a missing key (off: unsupported).
  bool putcat_append = false;
};

}  // namespace cachet::tokyotyrant
