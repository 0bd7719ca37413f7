// The memory plugin's own behaviour beyond the conformance suite: the byte
// budget and LRU eviction, limits, and its statistics.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/backend.h"
#include "cachet/batch.h"
#include "cachet/cache.h"
#include "cachet/config.h"
#include "support/allocation_hooks.h"
#include "../../plugins/memory/memory_entry.h"
#include "../../plugins/memory/writer_lanes.h"

using cachet::Cache;
using cachet::Config;

namespace {

std::unique_ptr<Cache> OpenConfigured(const std::string& config_text) {
  auto config = Config::Parse(config_text, "memory-test.conf");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

std::unique_ptr<Cache> OpenMemory(const std::string& memory_section) {
  return OpenConfigured("[cache]\nbackend = memory\n[memory]\n" + memory_section);
}

std::map<std::string, std::string> StatsOf(Cache& cache) {
  auto stats = cache.Stats();
  REQUIRE(stats.ok());
  return {stats->begin(), stats->end()};
}

std::uint64_t StatOf(Cache& cache, const std::string& name) {
  return std::stoull(StatsOf(cache)[name]);
}

}  // namespace

TEST_CASE("memory stays within max_bytes by evicting old items", "[memory]") {
  auto cache = OpenMemory("max_bytes = 65536\nshards = 1\n");
  const std::string value(1000, 'v');
  for (int i = 0; i < 500; ++i) REQUIRE(cache->Set("k" + std::to_string(i), value).ok());

  auto stats = StatsOf(*cache);
  CHECK(std::stoull(stats["bytes"]) <= 65536);
  CHECK(std::stoull(stats["evictions"]) > 0);
  CHECK(cache->Get("k0").miss());
  CHECK(cache->Get("k499").hit());
}

TEST_CASE("memory keeps an item that is read over ones that are not", "[memory]") {
  auto cache = OpenMemory("max_bytes = 65536\nshards = 1\n");
  const std::string value(1000, 'v');
  REQUIRE(cache->Set("hot", value).ok());
  for (int i = 0; i < 500; ++i) {
    REQUIRE(cache->Set("cold" + std::to_string(i), value).ok());
    CHECK(cache->Get("hot").hit());
  }
  CHECK(cache->Get("cold0").miss());
}

TEST_CASE("memory refuses values over max_item_size and a refused set drops the old one",
          "[memory]") {
  auto cache = OpenMemory("max_item_size = 100\n");
  REQUIRE(cache->Set("k", std::string("small")).ok());
  // Other writes keep it.
  CHECK(cache->Append("k", std::string(100, 'x')).IsTooLarge());
  CHECK(cache->Replace("k", std::string(101, 'x')).IsTooLarge());
  CHECK(cache->Get("k").value_or("") == "small");
  CHECK(cache->Set("k", std::string(101, 'x')).IsTooLarge());
  CHECK(cache->Get("k").miss());
  // The store drops it as it refuses the set, so a read later in the same batch misses.
  REQUIRE(cache->Set("k", std::string("small")).ok());
  cachet::Batch batch(*cache);
  const auto refused = batch.Set("k", std::string(101, 'x'));
  const auto read = batch.Get("k");
  cache->Run(batch);
  CHECK(batch.Outcome(refused).IsTooLarge());
  CHECK(batch.Outcome(read).miss());
  // Refused as larger than the whole budget, too (read in the same batch: the
  // store itself dropped it).
  auto tiny = OpenMemory("max_bytes = 4096\nshards = 1\n");
  REQUIRE(tiny->Set("k", std::string("small")).ok());
  cachet::Batch over_budget(*tiny);
  const auto refused_there = over_budget.Set("k", std::string(8000, 'x'));
  const auto read_there = over_budget.Get("k");
  tiny->Run(over_budget);
  CHECK(over_budget.Outcome(refused_there).IsTooLarge());
  CHECK(over_budget.Outcome(read_there).miss());
}

TEST_CASE("memory refuses keys over max_key_size", "[memory]") {
  auto cache = OpenMemory("max_key_size = 8\n");
  CHECK(cache->Set("12345678", std::string("v")).ok());
  CHECK(cache->Set("123456789", std::string("v")).IsInvalidArgument());
}

TEST_CASE("memory keeps any bytes in a key", "[memory]") {
  auto cache = OpenMemory("");
  const std::string key("a b\r\n\0c", 7);
  REQUIRE(cache->Set(key, std::string("v")).ok());
  CHECK(cache->Get(key).value_or("") == "v");
  CHECK(cache->Get(std::string("a b\r\n", 5)).miss());
}

TEST_CASE("memory counts hits, misses and items", "[memory]") {
  auto cache = OpenMemory("");
  REQUIRE(cache->Set("a", std::string("1")).ok());
  REQUIRE(cache->Set("b", std::string("2")).ok());
  CHECK(cache->Get("a").hit());
  CHECK(cache->Get("zz").miss());
  auto stats = StatsOf(*cache);
  CHECK(stats["curr_items"] == "2");
  CHECK(stats["get_hits"] == "1");
  CHECK(stats["get_misses"] == "1");
  CHECK(stats["total_items"] == "2");
  REQUIRE(cache->Flush().ok());
  CHECK(StatsOf(*cache)["curr_items"] == "0");
  CHECK(StatsOf(*cache)["bytes"] == "0");
}

TEST_CASE("memory grows a value by appends and keeps it whole", "[memory]") {
  auto cache = OpenMemory("");
  REQUIRE(cache->Set("log", std::string()).ok());
  std::string expected;
  for (int i = 0; i < 300; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    REQUIRE(cache->Append("log", line).ok());
    expected += line;
  }
  REQUIRE(cache->Prepend("log", "head\n").ok());
  CHECK(cache->Get("log").value_or("") == "head\n" + expected);
}

TEST_CASE("memory keeps flags, and stores them only when they are not 0", "[memory]") {
  auto cache = OpenMemory("shards = 1\n");
  cachet::Backend& store = cache->backend();
  const auto set = cachet::StoreMode::kSet;
  cachet::Item item;

  // Every write that keeps an item's flags keeps them: append, prepend, incr, touch.
  REQUIRE(store.Store(set, "k", cachet::ItemView("41", 0xDEADBEEF), {}).ok());
  REQUIRE(store.Store(cachet::StoreMode::kAppend, "k", cachet::ItemView("0"), {}).ok());
  REQUIRE(store.Store(cachet::StoreMode::kPrepend, "k", cachet::ItemView("1"), {}).ok());
  std::uint64_t counted = 0;
  REQUIRE(store.Incr("k", 1, &counted).ok());
  CHECK(counted == 1411);
  REQUIRE(store.Touch("k", cachet::Ttl{3600000}).ok());
  REQUIRE(store.GetAndTouch("k", cachet::Ttl{0}, &item).ok());
  CHECK(item.value == "1411");
  CHECK(item.flags == 0xDEADBEEF);

  // Rewrites that switch between flags and none reuse each other's freed blocks.
  for (std::uint32_t i = 0; i < 300; ++i) {
    const std::string value(100 + i % 7, static_cast<char>('a' + i % 26));
    const std::uint32_t flags = i % 2 == 0 ? 0 : i;
    REQUIRE(store.Store(set, "k", cachet::ItemView(value, flags), {}).ok());
    REQUIRE(store.Get("k", &item).ok());
    REQUIRE(item.value == value);
    REQUIRE(item.flags == flags);
  }

  // The flags' 4 bytes are charged only to the item that has them: 16 + 8 +
  // 96 bytes and the allocator's header word fill a 128-byte chunk exactly.
  REQUIRE(cache->Flush().ok());
  REQUIRE(store.Store(set, "plain:01", cachet::ItemView(std::string(96, 'v'), 0), {}).ok());
  const std::uint64_t plain = StatOf(*cache, "bytes");
  REQUIRE(cache->Flush().ok());
  REQUIRE(store.Store(set, "flags:01", cachet::ItemView(std::string(96, 'v'), 5), {}).ok());
  const std::uint64_t flagged = StatOf(*cache, "bytes");
  CHECK(flagged > plain);
  CHECK(flagged <= plain + 16);
  REQUIRE(store.Get("flags:01", &item).ok());
  CHECK(item.flags == 5);
  CHECK(item.value == std::string(96, 'v'));
}

TEST_CASE("memory entries keep a 47-bit CAS apart from the flags bit", "[memory]") {
  using cachet::memory::kLargestCas;
  using cachet::memory::MemoryEntry;
  // The largest token fills every CAS bit beside has_flags: it must not set it.
  MemoryEntry* plain = MemoryEntry::Create("key", 0, 5);
  REQUIRE(plain != nullptr);
  plain->set_cas(kLargestCas);
  CHECK(plain->cas() == kLargestCas);
  CHECK(!plain->has_flags());
  CHECK(plain->flags() == 0);
  CHECK(plain->key() == "key");
  MemoryEntry::Destroy(plain);

  // And a token does not clear the flags bit of an entry that has flags.
  MemoryEntry* flagged = MemoryEntry::Create("key", 7, 5);
  REQUIRE(flagged != nullptr);
  flagged->set_cas(kLargestCas - 1);
  CHECK(flagged->cas() == kLargestCas - 1);
  CHECK(flagged->flags() == 7);
  flagged->set_cas(0x12345678ABCD);
  CHECK(flagged->cas() == 0x12345678ABCD);
  CHECK(flagged->flags() == 7);
  MemoryEntry::Destroy(flagged);
  CHECK(kLargestCas == (std::uint64_t{1} << 47) - 1);

  // A thread's tokens come in blocks of 65,536; the last block ends at the largest
  // token, and the blocks then start over at 1, never 0.
  using cachet::memory::WriterLanes;
  CHECK(WriterLanes::FirstCasOf(0) == 1);
  CHECK(WriterLanes::CasEndOf(0) == 65536);
  CHECK(WriterLanes::FirstCasOf(1) == 65536);
  const std::uint64_t last_block = (std::uint64_t{1} << 31) - 1;
  CHECK(WriterLanes::CasEndOf(last_block) - 1 == kLargestCas);
  CHECK(WriterLanes::FirstCasOf(last_block + 1) == 1);
  CHECK(WriterLanes::CasEndOf(last_block + 1) == 65536);
}

TEST_CASE("memory counters survive growing from 1 to 20 digits", "[memory]") {
  auto cache = OpenMemory("");
  REQUIRE(cache->Set("n", std::string("9")).ok());
  auto big = cache->Incr("n", 18446744073709551600ull);
  REQUIRE(big.ok());
  CHECK(*big == 18446744073709551609ull);
  CHECK(cache->Get("n").value_or("") == "18446744073709551609");
  auto small = cache->Decr("n", 18446744073709551600ull);
  REQUIRE(small.ok());
  CHECK(cache->Get("n").value_or("") == "9");
}

TEST_CASE("memory refuses a max_key_size or max_item_size its entries cannot hold", "[memory]") {
  for (const char* section : {"max_key_size = 65536\n", "max_item_size = 4294967296\n"}) {
    auto config = Config::Parse(std::string("[cache]\nbackend = memory\n[memory]\n") + section,
                                "memory-bounds.conf");
    REQUIRE(config.ok());
    auto cache = Cache::Open(std::move(config).value());
    INFO(section);
    REQUIRE_FALSE(cache.ok());
    const std::string name = std::string(section).substr(0, std::string(section).find(' '));
    CHECK(cache.status().message().find(name) != std::string::npos);
  }
  auto largest = OpenMemory("max_key_size = 65535\n");
  CHECK(largest->Set(std::string(65535, 'k'), std::string("v")).ok());
  CHECK(largest->Get(std::string(65535, 'k')).hit());
}

TEST_CASE("memory refuses a max_bytes too small to hold its shards and an item", "[memory]") {
  // 16 shards (auto) and 4 take 512 bytes each for their empty tables, plus 1 KiB for items.
  for (const auto& [section, least] :
       {std::pair{"max_bytes = 1\n", "9216"}, std::pair{"max_bytes = 9215\n", "9216"},
        std::pair{"shards = 4\nmax_bytes = 3071\n", "3072"}}) {
    auto config = Config::Parse(std::string("[cache]\nbackend = memory\n[memory]\n") + section,
                                "memory-budget.conf");
    REQUIRE(config.ok());
    auto cache = Cache::Open(std::move(config).value());
    INFO(section);
    REQUIRE_FALSE(cache.ok());
    CHECK(cache.status().message().find(std::string("must be between ") + least) !=
          std::string::npos);
  }
  for (const char* smallest : {"max_bytes = 9216\n", "shards = 4\nmax_bytes = 3072\n"}) {
    auto cache = OpenMemory(smallest);
    INFO(smallest);
    CHECK(cache->Set("k", std::string(100, 'v')).ok());
    CHECK(cache->Get("k").hit());
  }
}

TEST_CASE("memory keeps expiries in 32 bits: milliseconds, then seconds, then none", "[memory]") {
  using cachet::memory::ExpiryCode;
  const std::int64_t base = ExpiryCode::Base();
  CHECK(ExpiryCode::Encode(0) == ExpiryCode::kNever);
  // Up to 2^31 ms after the base: to the millisecond.
  for (const std::int64_t after : {std::int64_t{1}, std::int64_t{1500}, (std::int64_t{1} << 31) - 1}) {
    const std::uint32_t code = ExpiryCode::Encode(base + after);
    REQUIRE(code != ExpiryCode::kNever);
    CHECK(ExpiryCode::Decode(code) == base + after);
  }
  // Past that: seconds, rounded up, never early.
  const std::int64_t month = std::int64_t{30} * 24 * 3600 * 1000 + 1;
  const std::uint32_t code = ExpiryCode::Encode(base + month);
  REQUIRE(code != ExpiryCode::kNever);
  CHECK(ExpiryCode::Decode(code) >= base + month);
  CHECK(ExpiryCode::Decode(code) - (base + month) < 1000);
  // Or down, never late (the near cache's tier: an entry must not outlive ttl_ms).
  const std::uint32_t down = ExpiryCode::Encode(base + month, /*round_down=*/true);
  REQUIRE(down != ExpiryCode::kNever);
  CHECK(ExpiryCode::Decode(down) <= base + month);
  CHECK((base + month) - ExpiryCode::Decode(down) < 1000);
  // Past 2^31 seconds (68 years): no expiry, as the item outlives the process.
  CHECK(ExpiryCode::Encode(base + (std::int64_t{1} << 31) * 1000 + 1000) == ExpiryCode::kNever);
}

TEST_CASE("memory keeps an item with a month-long ttl", "[memory]") {
  auto cache = OpenMemory("");
  REQUIRE(cache->Set("month", std::string("v"), cachet::Ttl(std::int64_t{30} * 24 * 3600 * 1000)).ok());
  CHECK(cache->Get("month").hit());
}

namespace {

// The shard a key falls in, as MemoryStore::Locate picks it.
std::size_t ShardOf(const std::string& key, std::size_t shards) {
  const std::uint64_t hash = std::hash<std::string_view>{}(key);
  return static_cast<std::size_t>(((hash >> 32) * shards) >> 32);
}

// `count` keys, all of them in shard `shard` of `shards`.
std::vector<std::string> KeysInShard(std::size_t shard, std::size_t shards, int count,
                                     const std::string& stem) {
  std::vector<std::string> keys;
  for (int i = 0; static_cast<int>(keys.size()) < count && i < 1000000; ++i) {
    std::string key = stem + std::to_string(i);
    if (ShardOf(key, shards) == shard) keys.push_back(std::move(key));
  }
  REQUIRE(static_cast<int>(keys.size()) == count);
  return keys;
}

}  // namespace

TEST_CASE("memory removes a key in place and a set of its size takes the entry back",
          "[memory]") {
  // A delete leaves the entry linked, marked removed, for a set of the same size
  // to rewrite in place: nothing is built or unlinked, and the key is absent to
  // every other operation meanwhile.
  auto cache = OpenMemory("shards = 1\n");
  cachet::Backend& store = cache->backend();
  const cachet::WriteOptions plain;
  REQUIRE(cache->Set("k", std::string(100, 'a')).ok());
  REQUIRE(cache->Set("n", std::string("41")).ok());
  const std::uint64_t built = StatOf(*cache, "total_items");
  const std::uint64_t bytes = StatOf(*cache, "bytes");
  REQUIRE(store.Remove("k").ok());
  REQUIRE(store.Remove("n").ok());
  CHECK(StatOf(*cache, "curr_items") == 0);
  CHECK(StatOf(*cache, "bytes") == bytes);  // kept until a write needs the room
  cachet::Item item;
  CHECK(store.Gets("k", &item).code() == cachet::StatusCode::kNotFound);
  CHECK(store.Remove("k").code() == cachet::StatusCode::kNotFound);
  const std::string same(100, 'b');
  CHECK(store.Store(cachet::StoreMode::kReplace, "k", cachet::ItemView(same), plain).code() ==
        cachet::StatusCode::kNotStored);
  CHECK(store.Store(cachet::StoreMode::kCas, "k", cachet::ItemView(same, 0, 1), plain).code() ==
        cachet::StatusCode::kNotFound);
  std::uint64_t value = 0;
  CHECK(store.Incr("n", 1, &value).code() == cachet::StatusCode::kNotFound);
  CHECK(store.Touch("n", cachet::Ttl(0)).code() == cachet::StatusCode::kNotFound);
  CHECK(StatOf(*cache, "expired") == 0);  // a removed entry is not an expired one

  // Each of those unlinked what it found, so the next set of the key builds it again...
  REQUIRE(cache->Set("k", same).ok());
  CHECK(StatOf(*cache, "total_items") == built + 1);
  // ...and a set of the removed size takes the entry back in place.
  REQUIRE(store.Remove("k").ok());
  REQUIRE(cache->Set("k", std::string(100, 'c')).ok());
  CHECK(StatOf(*cache, "total_items") == built + 1);
  CHECK(StatOf(*cache, "curr_items") == 1);
  REQUIRE(store.Gets("k", &item).ok());
  CHECK(item.value == std::string(100, 'c'));
  // An add of a removed key stores it; a second add finds it.
  REQUIRE(store.Remove("k").ok());
  CHECK(store.Store(cachet::StoreMode::kAdd, "k", cachet::ItemView(same), plain).ok());
  CHECK(store.Store(cachet::StoreMode::kAdd, "k", cachet::ItemView(same), plain).code() ==
        cachet::StatusCode::kNotStored);
  // A flush takes removed entries with the rest.
  REQUIRE(store.Remove("k").ok());
  REQUIRE(cache->Flush().ok());
  CHECK(StatOf(*cache, "curr_items") == 0);
  CHECK(StatOf(*cache, "bytes") == 0);
}

TEST_CASE("memory gives the room of keys removed in place to new keys before evicting",
          "[memory]") {
  // One shard of 256 KiB, filled with 200 items of 1000 bytes and all removed:
  // 200 new keys of another size must take their room without evicting any of
  // each other, and a set then finds every one of them.
  auto cache = OpenMemory("max_bytes = 262144\nshards = 1\n");
  const std::string value(1000, 'v');
  for (int i = 0; i < 200; ++i) REQUIRE(cache->Set("old" + std::to_string(i), value).ok());
  for (int i = 0; i < 200; ++i) REQUIRE(cache->Remove("old" + std::to_string(i)).ok());
  CHECK(StatOf(*cache, "curr_items") == 0);
  const std::string other(1100, 'w');
  for (int i = 0; i < 200; ++i) REQUIRE(cache->Set("new" + std::to_string(i), other).ok());
  CHECK(StatOf(*cache, "evictions") == 0);
  CHECK(StatOf(*cache, "curr_items") == 200);
  CHECK(StatOf(*cache, "bytes") + StatOf(*cache, "table_bytes") <= 262144);
  for (int i = 0; i < 200; ++i) CHECK(cache->Get("new" + std::to_string(i)).hit());
}

TEST_CASE("memory shards share one budget: one shard may hold most of it", "[memory]") {
  // 16 shards of a 1 MiB budget: a fixed split would give each 64 KiB.
  auto cache = OpenMemory("max_bytes = 1048576\nshards = 16\n");
  const std::string value(1000, 'v');
  const auto first = KeysInShard(3, 16, 600, "a");  // about 600 KiB, all in shard 3
  for (const auto& key : first) REQUIRE(cache->Set(key, value).ok());
  CHECK(StatOf(*cache, "evictions") == 0);
  CHECK(StatOf(*cache, "curr_items") == 600);
  for (const auto& key : first) CHECK(cache->Get(key).hit());

  // Once shard 3 lets its items go, its bytes are another shard's to borrow.
  for (const auto& key : first) REQUIRE(cache->Remove(key).ok());
  const auto second = KeysInShard(11, 16, 600, "b");
  for (const auto& key : second) REQUIRE(cache->Set(key, value).ok());
  CHECK(StatOf(*cache, "evictions") == 0);
  CHECK(StatOf(*cache, "curr_items") == 600);
  CHECK(StatOf(*cache, "bytes") + StatOf(*cache, "table_bytes") <= 1048576);
}

TEST_CASE("memory lends a small budget to every shard, not to the first few", "[memory]") {
  // 160 KB over 16 shards: 10 KB each. 600 items of about 140 bytes take 86 KB
  // and the tables about 16 KB, so all of them fit. Had the shards borrowed
  // 16 KiB at a time, the first nine would have taken the whole budget and
  // the others would evict what they hold.
  auto cache = OpenMemory("max_bytes = 160000\nshards = 16\n");
  const std::string value(100, 'v');
  for (int i = 0; i < 600; ++i) REQUIRE(cache->Set("k" + std::to_string(i), value).ok());
  CHECK(StatOf(*cache, "evictions") == 0);
  CHECK(StatOf(*cache, "curr_items") == 600);
  for (int i = 0; i < 600; ++i) CHECK(cache->Get("k" + std::to_string(i)).hit());
  CHECK(StatOf(*cache, "bytes") + StatOf(*cache, "table_bytes") <= 160000);
}

TEST_CASE("memory stores an item larger than a shard's share by evicting elsewhere",
          "[memory]") {
  // 64 shards of 4 MiB: 64 KiB each, and a 1 MiB value.
  auto cache = OpenMemory("max_bytes = 4194304\nshards = 64\n");
  const std::string small(1000, 's');
  for (int i = 0; i < 5000; ++i) REQUIRE(cache->Set("k" + std::to_string(i), small).ok());
  CHECK(StatOf(*cache, "evictions") > 0);  // the budget is full
  const std::string big(1 << 20, 'b');
  REQUIRE(cache->Set("big", big).ok());
  CHECK(cache->Get("big").value_or("") == big);
  CHECK(StatOf(*cache, "bytes") + StatOf(*cache, "table_bytes") <= 4194304);
  // The room came from many shards' CLOCK victims, a quarter of a share at most
  // from each: no shard but the big value's own was emptied (asked for all it
  // lacked, each shard asked would have given everything, about 16 of them).
  std::vector<int> left(64, 0);
  for (int i = 0; i < 5000; ++i) {
    const std::string key = "k" + std::to_string(i);
    if (cache->Get(key).hit()) ++left[ShardOf(key, 64)];
  }
  int emptied = 0;
  for (std::size_t shard = 0; shard < left.size(); ++shard) {
    if (shard != ShardOf("big", 64) && left[shard] == 0) ++emptied;
  }
  CHECK(emptied == 0);
}

TEST_CASE("memory GetInto copies each value into the string it is given", "[memory]") {
  auto cache = OpenMemory("");
  const std::string long_value(300, 'l');
  REQUIRE(cache->Set("long", long_value).ok());
  REQUIRE(cache->Set("short", std::string("s")).ok());
  REQUIRE(cache->Set("empty", std::string()).ok());
  std::string value;
  value.reserve(512);
  const char* storage = value.data();
  // One round of reads, each outcome noted, so no assertion runs while allocations
  // are counted (a reporter may allocate for a passing one).
  bool right[4] = {};
  const auto read_all = [&] {
    right[0] = cache->GetInto("long", &value).ok() && value == long_value;
    right[1] = cache->GetInto("short", &value).ok() && value == "s";
    right[2] = cache->GetInto("empty", &value).ok() && value.empty();
    value = "stale";
    right[3] = cache->GetInto("absent", &value).IsNotFound() && value.empty();
  };
  for (int round = 0; round < 3; ++round) {
    const bool counted = round == 2;  // warm by then: no read allocates
    if (counted) cachet::test::CountAllocations(true);
    read_all();
    if (counted) cachet::test::CountAllocations(false);
    for (int i = 0; i < 4; ++i) {
      INFO("round " << round << ", read " << i << " (long, short, empty, absent)");
      CHECK(right[i]);
    }
  }
  CHECK(cachet::test::TakeAllocationCount() == 0);
  CHECK(value.data() == storage);  // no read needed new storage
}

TEST_CASE("memory GetInto of a key that lies in the string keeps the near cache right",
          "[memory]") {
  const auto opened =
      OpenConfigured("[cache]\nbackend = memory\nnear_cache = on\n[near_cache]\nttl_ms = 60000\n");
  Cache& cache = *opened;
  const std::string key(40, 'k');
  const std::string other(40, 'v');  // the key's value, as long as the key: no new storage
  // Appends leave nothing near: the first read of each key goes to the store.
  REQUIRE(cache.Set(key, other.substr(1)).ok());
  REQUIRE(cache.Append(key, other.substr(0, 1)).ok());
  REQUIRE(cache.Set(other, std::string("other's")).ok());
  REQUIRE(cache.Append(other, " value").ok());
  for (int round = 0; round < 2; ++round) {  // the first from the store, the second near
    std::string text = key;  // the key in the string's heap storage
    REQUIRE(cache.GetInto(text, &text).ok());
    CHECK(text == other);
    // What the read kept near is under the key asked for, not the bytes written over it.
    CHECK(cache.Get<std::string>(other).value() == "other's value");
  }
}

TEST_CASE("memory shards = auto: lru one per 512 KiB from 16 to 128 and "
          "tinylfu one per 64 KiB from 16 to 1024",
          "[memory]") {
  CHECK(StatOf(*OpenMemory("policy = tinylfu\n"), "shards") == 1024);  // the default 64 MiB
  CHECK(StatOf(*OpenMemory("policy = tinylfu\nmax_bytes = 16777216\n"), "shards") == 256);
  CHECK(StatOf(*OpenMemory("policy = tinylfu\nmax_bytes = 65536\n"), "shards") == 16);
  CHECK(StatOf(*OpenMemory(""), "shards") == 128);  // the default 64 MiB
  CHECK(StatOf(*OpenMemory("max_bytes = 16777216\n"), "shards") == 32);
  CHECK(StatOf(*OpenMemory("max_bytes = 8388608\n"), "shards") == 16);
  CHECK(StatOf(*OpenMemory("max_bytes = 1048576\n"), "shards") == 16);
  CHECK(StatOf(*OpenMemory("max_bytes = 65536\n"), "shards") == 16);
  CHECK(StatOf(*OpenMemory("max_bytes = 1073741824\n"), "shards") == 128);
  CHECK(StatOf(*OpenMemory("shards = 16\n"), "shards") == 16);
  CHECK(StatOf(*OpenMemory("shards = +16\n"), "shards") == 16);

  for (const char* bad : {"abc", "Auto", "16x", ""}) {
    auto config = Config::Parse(std::string("[cache]\nbackend = memory\n[memory]\nshards = ") +
                                    bad + "\n",
                                "memory-test.conf");
    REQUIRE(config.ok());
    auto cache = Cache::Open(std::move(config).value());
    INFO(bad);
    REQUIRE_FALSE(cache.ok());
    CHECK(cache.status().IsConfigError());
    CHECK_THAT(std::string(cache.status().message()),
               Catch::Contains("must be auto or a number from 1 to 1024"));
  }
}

// A counter that gains digits grows like an append: it evicts to stay within
// max_bytes, and cannot pass max_item_size.
TEST_CASE("memory counters that grow stay within max_bytes and max_item_size", "[memory]") {
  auto cache = OpenMemory("max_bytes = 1048576\nshards = 1\n");
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; ++i) {
    keys.push_back("counter" + std::to_string(i));
    REQUIRE(cache->Set(keys.back(), std::string("1")).ok());
  }
  for (const std::string& key : keys) (void)cache->Incr(key, 10000000000000000000ull);
  auto stats = StatsOf(*cache);
  CHECK(std::stoull(stats["bytes"]) + std::stoull(stats["table_bytes"]) <= 1048576);
  CHECK(std::stoull(stats["evictions"]) > 0);

  auto small = OpenMemory("max_item_size = 4\n");
  REQUIRE(small->Set("n", std::string("9999")).ok());
  CHECK(small->Incr("n", 1000000).status().IsTooLarge());
  CHECK(small->Get("n").value_or("") == "9999");
  CHECK(small->Incr("n", 0).ok());
}

// The near cache's tier rounds expiries down; the option takes only up or down.
TEST_CASE("memory expiry_rounding is up or down", "[memory]") {
  auto up = OpenMemory("expiry_rounding = up\n");
  auto down = OpenMemory("expiry_rounding = down\n");
  REQUIRE(down->Set("k", std::string("v"), cachet::Ttl{60000}).ok());
  CHECK(down->Get("k").value_or("") == "v");  // within 24.8 days: to the millisecond
  auto config = Config::Parse("[cache]\nbackend = memory\n[memory]\nexpiry_rounding = sideways\n",
                              "rounding.conf");
  REQUIRE(config.ok());
  const auto refused = Cache::Open(std::move(config).value());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().IsConfigError());
}
