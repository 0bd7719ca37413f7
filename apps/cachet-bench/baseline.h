// The plain baseline beside the memory store (--baseline): a std::unordered_map
// under a std::shared_mutex per shard, written for the benchmark alone, so a
// table shows what the store's design buys over the obvious one in the same run.
// It has 16 shards (the memory store's default before `shards = auto`), stores strings, and offers
// get, set, delete, incr, decr and get_multi; other scenarios are skipped.
#pragma once

#include "target.h"

namespace cachet::bench {

// A target "baseline" whose clients all share one map.
Target BaselineTarget();

}  // namespace cachet::bench
