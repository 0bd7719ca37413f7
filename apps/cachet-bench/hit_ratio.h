// The hit_ratio scenario: how well a memory store's eviction keeps the keys an
// application asks for. It is not a rate, so it runs apart from the interleaving
// runner and prints its own table.
//
// A deterministic Zipf key stream (skews 0.7, 0.9 and 1.1 over a fixed key space)
// is replayed cache-aside against the config's memory store (get; on a miss, set)
// with max_bytes at 1 % and 10 % of what the whole key space would cost the
// store, once with `policy = lru` and once with `policy = tinylfu`. Beside each
// figure stands the benchmark's own reference: an exact LRU list with the same
// byte budget, charging every item what the store charges it. A second stream
// mixes scans of keys seen once into the Zipf stream, which is LRU's weakness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cachet/status.h"

namespace cachet::bench {

inline constexpr const char* kHitRatioScenario = "hit_ratio";

// Exact LRU over a byte budget: the reference the store's figures stand beside.
class ExactLru {
 public:
  explicit ExactLru(std::size_t budget_bytes);
  ~ExactLru();
  ExactLru(const ExactLru&) = delete;
  ExactLru& operator=(const ExactLru&) = delete;

  // A get of `key`, then on a miss a set costing `charge` bytes; true on a hit.
  bool Access(std::uint64_t key, std::size_t charge);

 private:
  struct State;
  State* state_;
};

// Zipf ranks 0..keys-1 with P(rank r) proportional to 1/(r+1)^skew, from a
// fixed-seed generator: the same stream on every run and every machine.
class ZipfStream {
 public:
  ZipfStream(std::size_t keys, double skew, std::uint64_t seed);
  std::size_t Next();

 private:
  std::vector<double> cdf_;
  std::uint64_t state_;
};

struct HitRatioPlan {
  std::vector<std::string> configs;
  std::vector<std::string> overrides;
  std::size_t value_size = 100;
  std::size_t keys = 100000;       // the Zipf key space
  std::size_t requests = 1000000;  // per stream, after the warm-up
  std::size_t warmup = 200000;     // requests replayed before counting
};

// Runs the table for every memory config and prints it; an error stops the run.
Status RunHitRatio(const HitRatioPlan& plan);

}  // namespace cachet::bench
