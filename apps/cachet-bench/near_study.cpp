// cachet-bench --near: see near_study.h.
#include "near_study.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "hit_ratio.h"
#include "peers.h"
#include "target.h"

namespace cachet::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr double kSkew = 0.9;
constexpr int kReadsInTen = 9;  // 90 % reads
constexpr std::uint64_t kStreamSeed = 42;
constexpr std::size_t kPreloadChunk = 1000;

// The server's counters that tell how many reads and commands reached it.
struct ServerCounters {
  std::uint64_t reads = 0;
  std::uint64_t commands = 0;
};

// The sum of every stat named `name` (a multi-server store prefixes "host:port ").
std::uint64_t SumOf(const StatsMap& stats, std::string_view name) {
  std::uint64_t sum = 0;
  for (const auto& [key, value] : stats) {
    const std::string_view k(key);
    if (k == name || (k.ends_with(name) && k[k.size() - name.size() - 1] == ' ')) {
      sum += std::strtoull(value.c_str(), nullptr, 10);
    }
  }
  return sum;
}

Result<ServerCounters> ReadCounters(Cache& cache) {
  Result<StatsMap> stats = cache.Stats();
  if (!stats.ok()) return stats.status();
  ServerCounters c;
  if (cache.backend().name() == "redis") {
    c.reads = SumOf(*stats, "keyspace_hits") + SumOf(*stats, "keyspace_misses");
    c.commands = SumOf(*stats, "total_commands_processed");
  } else {
    c.reads = SumOf(*stats, "cmd_get");
    c.commands = SumOf(*stats, "cmd_get") + SumOf(*stats, "cmd_set") + SumOf(*stats, "cmd_touch") +
                 SumOf(*stats, "delete_hits") + SumOf(*stats, "delete_misses");
  }
  return c;
}

std::string KeyOf(std::size_t id) {
  char key[32];
  std::snprintf(key, sizeof key, "near:%08zu", id);
  return key;
}

struct Row {
  std::string label;
  double rate = 0;         // operations per second
  double local = 0;        // share of reads that did not reach the server
  double server_cmds = 0;  // server commands per second
  double cmds_per_op = 0;  // server commands per operation of the client
  std::uint64_t errors = 0;
};

Result<Row> RunRow(const BenchOptions& bench, const Target& target, Cache& observer,
                   const std::vector<std::string>& keys) {
  Result<std::unique_ptr<Client>> client = target.connect();
  if (!client.ok()) return client.status();
  ZipfStream stream(keys.size(), kSkew, kStreamSeed);
  std::mt19937_64 coin(kStreamSeed);
  const std::string value(bench.value_size, 'n');
  std::string read;
  Row row;
  row.label = target.label;
  std::uint64_t ops = 0, reads = 0;
  Result<ServerCounters> before = ReadCounters(observer);
  if (!before.ok()) return before.status();
  const auto started = SteadyClock::now();
  const auto deadline = started + std::chrono::duration_cast<SteadyClock::duration>(
                                      std::chrono::duration<double>(bench.duration_seconds));
  // Bounded by the deadline; the clock is read every 64 operations.
  while ((ops & 63) != 0 || SteadyClock::now() < deadline) {
    const std::string& key = keys[stream.Next()];
    Status s;
    if (coin() % 10 < kReadsInTen) {
      s = (*client)->Get(key, &read);
      ++reads;
      if (s.IsNotFound()) s = Status::OK();
    } else {
      s = (*client)->Set(key, value);
    }
    if (!s.ok()) ++row.errors;
    ++ops;
  }
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  Result<ServerCounters> after = ReadCounters(observer);
  if (!after.ok()) return after.status();
  const double server_reads = static_cast<double>(after->reads - before->reads);
  row.rate = static_cast<double>(ops) / seconds;
  row.local = reads == 0 ? 0 : std::max(0.0, 1.0 - server_reads / static_cast<double>(reads));
  const double commands = static_cast<double>(after->commands - before->commands);
  row.server_cmds = commands / seconds;
  row.cmds_per_op = commands / static_cast<double>(ops);
  return row;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int RunNearStudy(const BenchOptions& bench) {
  std::vector<std::string> off = bench.overrides;
  off.push_back("cache.near_cache=off");
  std::vector<std::string> on = bench.overrides;
  on.push_back("cache.near_cache=on");
  Result<OpenedTargets> plain = OpenTargets({bench.configs[0]}, off, {});
  Result<OpenedTargets> near = OpenTargets({bench.configs[0]}, on, {});
  if (!plain.ok() || !near.ok()) {
    std::cerr << "cachet-bench: " << (plain.ok() ? near : plain).status().ToString() << '\n';
    return 3;
  }
  std::vector<Target> targets = {plain->targets[0], near->targets[0]};
  targets[0].label += " near off";
  targets[1].label += " near on";
  if (bench.peers) AddPeerTargets(plain->first_server, &targets);

  Result<Config> config = Config::LoadFile(bench.configs[0], off);
  if (!config.ok()) {
    std::cerr << "cachet-bench: " << config.status().ToString() << '\n';
    return 3;
  }
  Result<std::unique_ptr<Cache>> observer = Cache::Open(std::move(config).value());
  if (!observer.ok()) {
    std::cerr << "cachet-bench: " << observer.status().ToString() << '\n';
    return 3;
  }
  std::vector<std::string> keys(bench.near_keys);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = KeyOf(i);
  // Every key holds a value before the first row, so reads are hits.
  const std::string value(bench.value_size, 'n');
  for (std::size_t first = 0; first < keys.size(); first += kPreloadChunk) {
    std::vector<std::pair<std::string, std::string>> chunk;
    for (std::size_t i = first; i < std::min(keys.size(), first + kPreloadChunk); ++i) {
      chunk.emplace_back(keys[i], value);
    }
    for (const Status& s : (*observer)->SetMulti(chunk)) {
      if (!s.ok()) {
        std::cerr << "cachet-bench: preload: " << s.ToString() << '\n';
        return 3;
      }
    }
  }

  std::printf(
      "cachet-bench --near: %s, Zipf(%.1f) over %zu keys, %d0 %% reads, %zu-byte values,\n"
      "one thread, %.1f s per row, median of %u\n\n",
      bench.configs[0].c_str(), kSkew, keys.size(), kReadsInTen, bench.value_size,
      bench.duration_seconds, bench.repeat);
  std::printf("%-28s %12s %14s %16s %14s %8s\n", "target", "ops/s", "reads local", "server cmds/s",
              "cmds per op", "errors");
  std::vector<std::vector<Row>> runs(targets.size());
  for (unsigned r = 0; r < bench.repeat; ++r) {
    for (std::size_t t = 0; t < targets.size(); ++t) {
      Result<Row> row = RunRow(bench, targets[t], **observer, keys);
      if (!row.ok()) {
        std::cerr << "cachet-bench: " << targets[t].label << ": " << row.status().ToString()
                  << '\n';
        return 3;
      }
      runs[t].push_back(*row);
    }
  }
  int status = 0;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    std::vector<double> rate, local, cmds, per_op;
    std::uint64_t errors = 0;
    for (const Row& row : runs[t]) {
      rate.push_back(row.rate);
      local.push_back(row.local);
      cmds.push_back(row.server_cmds);
      per_op.push_back(row.cmds_per_op);
      errors += row.errors;
    }
    std::printf("%-28s %12.0f %13.1f%% %16.0f %14.3f %8llu\n", targets[t].label.c_str(),
                Median(rate), 100 * Median(local), Median(cmds), Median(per_op),
                static_cast<unsigned long long>(errors));
    if (errors > 0) status = 3;
  }
  return status;
}

}  // namespace cachet::bench
