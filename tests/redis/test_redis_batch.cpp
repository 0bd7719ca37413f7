// Cache::Run over real redis-server processes: a server (standalone) or a master
// (cluster) killed in the middle of a batch fails only its own operations,
// noreply is refused naming redis and nothing is sent, and a gets in a batch
// carries the value's CAS token.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "cachet/net/distribution.h"
#include "cachet/net/endpoint.h"
#include "redis_backend.h"
#include "launchers/redis_cluster.h"
#include "launchers/redis_server.h"
#include "support/killed_server.h"

namespace cachet::redis {
namespace {

using std::chrono::milliseconds;

RedisOptions OptionsFor(const std::vector<std::unique_ptr<test::ServerProcess>>& servers) {
  RedisOptions options;
  for (const auto& s : servers) {
    options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(s->port()), 1});
  }
  options.pool.connection.io_timeout = milliseconds(3000);
  return options;
}

// Values are strings, which the codec stores raw, so no envelope is needed here.
std::unique_ptr<Cache> CacheOver(RedisOptions options) {
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  return std::make_unique<Cache>(std::make_shared<RedisBackend>(std::move(options)), codec.value(),
                                 CacheOptions{"app:", Ttl{0}, true});
}

std::vector<std::unique_ptr<test::ServerProcess>> StartServers(int count) {
  std::vector<std::unique_ptr<test::ServerProcess>> servers;
  for (int i = 0; i < count; ++i) {
    auto s = test::StartRedis();
    REQUIRE(s.ok());
    servers.push_back(std::move(*s));
  }
  return servers;
}

}  // namespace

TEST_CASE("a redis server killed in the middle of a Cache batch fails only its operations",
          "[redis][batch][faults]") {
  auto servers = StartServers(2);
  const RedisOptions options = OptionsFor(servers);
  std::unique_ptr<Cache> cache = CacheOver(options);
  auto dist = net::Distribution::Create(options.distribution, options.servers);

  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& k : keys) REQUIRE(cache->Set(k, k).ok());

  // Paused, server 0 takes the batch into its socket but answers nothing; it is
  // killed while the batch waits, and server 1 answers meanwhile.
  cachet::test::KilledWhilePaused killer(*servers[0], milliseconds(200));
  Batch batch(*cache);
  std::vector<BatchRead<std::string>> reads;
  std::vector<BatchWrite> writes;
  for (const std::string& k : keys) {
    reads.push_back(batch.Get(k));
    writes.push_back(batch.Append(k, "+"));
  }
  cache->Run(batch);
  killer.Join();

  int on_dead = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("key " << keys[i]);
    if (dist->ServerFor("app:" + keys[i]) == 0) {
      ++on_dead;
      CHECK(batch.Outcome(reads[i]).error());
      CHECK(batch.Outcome(writes[i]).IsError());
    } else {
      CHECK(batch.Outcome(reads[i]).value_or("") == keys[i]);
      CHECK(batch.Outcome(writes[i]).ok());
      CHECK(cache->Get(keys[i]).value_or("") == keys[i] + "+");
    }
  }
  CHECK(on_dead > 0);
  CHECK(on_dead < static_cast<int>(keys.size()));
}

// One MGET's elements pair with its keys inside one reply, so the values read
// before the large one stand. A pipeline's replies pair with its commands by
// position only: when it ends early, a reply skipped before would have been
// paired with the wrong command, so none of its answers stands.
TEST_CASE("a redis value too large to read in a batch ends it as its key's error",
          "[redis][batch]") {
  auto servers = StartServers(1);
  std::unique_ptr<Cache> writer = CacheOver(OptionsFor(servers));
  REQUIRE(writer->Set("before", std::string("small")).ok());
  REQUIRE(writer->Set("big", std::string(700 * 1000, 'b')).ok());
  REQUIRE(writer->Set("after", std::string("small")).ok());
  RedisOptions options = OptionsFor(servers);
  options.session.limits.max_bulk_length = 100 * 1000;  // below the stored value
  std::unique_ptr<Cache> reader = CacheOver(std::move(options));
  // Reads alone go as one MGET; with a write, as a pipeline of commands.
  const bool with_write = GENERATE(false, true);
  Batch batch(*reader);
  const auto before = batch.Get("before");
  const BatchWrite write = with_write ? batch.Set("written", std::string("w")) : BatchWrite{};
  const auto big = batch.Get("big");
  const auto after = batch.Get("after");
  reader->Run(batch);
  if (with_write) {
    CHECK(batch.Outcome(before).status().IsIoError());
    CHECK(batch.Outcome(write).IsIoError());  // it may have been applied
  } else {
    CHECK(batch.Outcome(before).value_or("") == "small");
  }
  INFO("big: " << batch.Outcome(big).status().ToString()
               << "; after: " << batch.Outcome(after).status().ToString());
  CHECK(batch.Outcome(big).status().IsTooLarge());
  // Left unanswered when the connection went with the value: not a size error of its own.
  CHECK(batch.Outcome(after).status().IsIoError());
  CHECK(batch.Outcome(after).status().message().find("not answered") != std::string_view::npos);
  CHECK(reader->Get("after").value_or("") == "small");
}

TEST_CASE("noreply on redis answers unsupported naming redis and sends nothing",
          "[redis][batch][noreply]") {
  auto servers = StartServers(1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers));
  Batch batch(*cache);
  const BatchWrite quiet = batch.Set("quiet", std::string("v"));
  batch.Noreply(quiet);
  const BatchWrite loud = batch.Set("loud", std::string("v"));
  cache->Run(batch);
  const Status s = batch.Outcome(quiet);
  CHECK(s.IsUnsupported());
  CHECK(std::string(s.message()).find("redis") != std::string::npos);
  CHECK(batch.Outcome(loud).ok());
  CHECK(cache->Get("quiet").miss());

  batch.Clear();
  batch.set_noreply(true);
  const BatchCounter counter = batch.Incr("loud");
  const BatchRead<std::string> read = batch.Get("loud");  // reads still go
  cache->Run(batch);
  CHECK(batch.StatusOf(counter).IsUnsupported());
  CHECK(batch.Outcome(read).value_or("") == "v");
}

TEST_CASE("a gets in a redis batch carries the token a cas then needs", "[redis][batch][cas]") {
  auto servers = StartServers(1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers));
  REQUIRE(cache->Set("c", std::string("one")).ok());
  Batch batch(*cache);
  const auto versioned = batch.Gets("c");
  cache->Run(batch);
  REQUIRE(batch.Outcome(versioned).hit());
  const std::uint64_t token = batch.Outcome(versioned)->cas;
  const Lookup<Versioned<std::string>> single = cache->Gets("c");
  REQUIRE(single.hit());
  CHECK(token == single->cas);

  batch.Clear();
  const BatchWrite swapped = batch.Cas("c", std::string("two"), token);
  const BatchWrite stale = batch.Cas("c", std::string("three"), token);
  cache->Run(batch);
  CHECK(batch.Outcome(swapped).ok());
  CHECK(batch.Outcome(stale).IsExists());
  CHECK(cache->Get("c").value_or("") == "two");
}

TEST_CASE("a gets in a redis batch answers its own read, before the batch's later write",
          "[redis][batch][cas]") {
  auto servers = StartServers(1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers));
  REQUIRE(cache->Set("c", std::string("one")).ok());
  REQUIRE(cache->Set("d", std::string("one")).ok());
  const Lookup<Versioned<std::string>> before = cache->Gets("c");
  REQUIRE(before.hit());
  Batch batch(*cache);
  const auto read_set = batch.Gets("c");
  const BatchWrite set = batch.Set("c", std::string("two"));
  const auto read_removed = batch.Gets("d");
  const BatchWrite removed = batch.Remove("d");
  cache->Run(batch);
  CHECK(batch.Outcome(set).ok());
  CHECK(batch.Outcome(removed).ok());
  const Lookup<Versioned<std::string>> got = batch.Outcome(read_set);
  REQUIRE(got.hit());
  CHECK(got->value == "one");
  CHECK(got->cas == before->cas);
  const Lookup<Versioned<std::string>> gone = batch.Outcome(read_removed);
  REQUIRE(gone.hit());
  CHECK(gone->value == "one");
  CHECK(gone->cas == before->cas);  // the same bytes, the same token
  CHECK(cache->Get("c").value_or("") == "two");
  CHECK(cache->Get("d").miss());
}

TEST_CASE("a cluster master killed in the middle of a Cache batch fails only its slots",
          "[redis][batch][cluster][faults]") {
  auto cluster = test::RedisCluster::Start();  // three masters, no replicas
  REQUIRE(cluster.ok());
  RedisOptions options;
  options.mode = RedisMode::kCluster;
  const std::vector<std::string> listed = {(*cluster)->seeds()};
  auto seeds = net::ParseServerList(listed, 6379);
  REQUIRE(seeds.ok());
  options.servers = *seeds;
  options.pool.connection.io_timeout = milliseconds(3000);
  std::unique_ptr<Cache> cache = CacheOver(std::move(options));

  std::vector<std::string> keys;
  for (int i = 0; i < 30; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& k : keys) REQUIRE(cache->Set(k, k).ok());
  const int victim_port = (*cluster)->MasterPorts().front();
  test::ServerProcess* victim = nullptr;
  for (const auto& node : (*cluster)->nodes()) {
    if (node->port() == victim_port) victim = node.get();
  }
  REQUIRE(victim != nullptr);
  // The victim's own keys: it answers EXISTS for them, MOVED for the others.
  std::vector<bool> on_victim;
  for (const std::string& k : keys) {
    on_victim.push_back(test::RedisCluster::Cli(victim_port, "exists app:" + k) == "1");
  }

  // As for a standalone server: paused, then killed while the batch waits. The
  // other masters answer well before the cluster's node timeout marks it failed.
  cachet::test::KilledWhilePaused killer(*victim, milliseconds(200));
  Batch batch(*cache);
  std::vector<BatchRead<std::string>> reads;
  for (const std::string& k : keys) reads.push_back(batch.Get(k));
  cache->Run(batch);
  killer.Join();

  int failed = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("key " << keys[i]);
    if (on_victim[i]) {
      ++failed;
      CHECK(batch.Outcome(reads[i]).error());
    } else {
      CHECK(batch.Outcome(reads[i]).value_or("") == keys[i]);
    }
  }
  CHECK(failed > 0);
  CHECK(failed < static_cast<int>(keys.size()));
}

}  // namespace cachet::redis
