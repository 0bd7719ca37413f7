// Cache::Run over real memcached servers, in both protocols: a server that dies
// in the middle of a batch fails its own operations only, and noreply in a batch
// loses a failed write's outcome with text but reports it with meta.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "memcached_fixture.h"
#include "support/killed_server.h"

namespace cachet::memcached::test {
namespace {

using std::chrono::milliseconds;

Protocol AnyProtocol() { return GENERATE(Protocol::kText, Protocol::kMeta); }

std::unique_ptr<Cache> CacheOver(const MemcachedOptions& options) {
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  return std::make_unique<Cache>(std::make_shared<MemcachedBackend>(options), codec.value(),
                                 CacheOptions{"app:", Ttl{0}, true});
}

}  // namespace

TEST_CASE("a server killed in the middle of a Cache batch fails only its operations",
          "[memcached][batch][faults]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  const Protocol protocol = AnyProtocol();
  auto servers = StartServers(2);
  REQUIRE(servers.size() == 2);
  MemcachedOptions o = OptionsFor(servers, protocol);
  o.pool.connection.io_timeout = milliseconds(3000);
  std::unique_ptr<Cache> cache = CacheOver(o);
  auto dist = net::Distribution::Create(o.distribution, o.servers);

  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& k : keys) REQUIRE(cache->Set(k, k).ok());

  // Paused, server 0 takes the batch into its socket but answers nothing; it is
  // killed while the batch waits, and server 1 answers meanwhile.
  cachet::test::KilledWhilePaused killer(*servers[0], milliseconds(200));
  Batch batch(*cache);
  std::vector<BatchRead<std::string>> reads;
  std::vector<BatchCounter> counters;
  for (const std::string& k : keys) {
    reads.push_back(batch.Get(k));
    counters.push_back(batch.Incr(k));  // not a number: invalid_argument where it is alive
  }
  cache->Run(batch);
  killer.Join();

  int on_dead = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("key " << keys[i]);
    // The namespace is part of the key the servers see, so placement hashes it.
    if (dist->ServerFor("app:" + keys[i]) == 0) {
      ++on_dead;
      CHECK(batch.Outcome(reads[i]).error());
      CHECK(batch.Outcome(counters[i]).status().IsError());
      CHECK_FALSE(batch.Outcome(counters[i]).status().IsInvalidArgument());
    } else {
      CHECK(batch.Outcome(reads[i]).value_or("") == keys[i]);
      CHECK(batch.Outcome(counters[i]).status().IsInvalidArgument());
    }
  }
  CHECK(on_dead > 0);
  CHECK(on_dead < static_cast<int>(keys.size()));
  const OpMetrics gets = cache->metrics()[static_cast<std::size_t>(CacheOp::kGet)];
  CHECK(gets.errors == static_cast<std::uint64_t>(on_dead));
}

TEST_CASE("a write's error in a Cache batch is its own, never the stored write's before it",
          "[memcached][batch]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  const Protocol protocol = AnyProtocol();
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers, protocol));
  REQUIRE(cache->Set("n", std::string("abc")).ok());

  Batch batch(*cache);
  const BatchWrite a = batch.Set("a", std::string("v"));
  const BatchCounter n = batch.Incr("n");  // CLIENT_ERROR: not a number
  const BatchWrite b = batch.Set("b", std::string("w"));
  cache->Run(batch);
  INFO("a: " << batch.Outcome(a).ToString() << ", n: " << batch.Outcome(n).status().ToString());
  CHECK(batch.Outcome(a).ok());
  CHECK(batch.Outcome(n).status().IsInvalidArgument());
  CHECK(batch.Outcome(b).ok());
  CHECK(cache->Get("a").value_or("") == "v");
  CHECK(cache->Get("b").value_or("") == "w");
}

// Found by an application's try: the set refused before it was sent left the
// old value to the batch's later operations, and the removal after the batch
// then took what they wrote.
TEST_CASE("a set over max_item_size in a batch drops the value in its place",
          "[memcached][batch]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  const Protocol protocol = AnyProtocol();
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers, protocol));
  const std::string big(2 * 1024 * 1024, 'h');  // over max_item_size (1 MiB)
  REQUIRE(cache->Set<std::int64_t>("n", 10).ok());
  REQUIRE(cache->Set("m", std::string("mid")).ok());

  Batch batch(*cache);
  const BatchWrite set_n = batch.Set("n", big);
  const BatchCounter incr_n = batch.Incr("n");
  const BatchWrite add_n = batch.Add("n", std::string("fresh"));
  const BatchWrite set_m = batch.Set("m", big);
  const BatchWrite append_m = batch.Append("m", "x");
  const auto read_m = batch.Get("m");
  cache->Run(batch);
  CHECK(batch.Outcome(set_n).IsTooLarge());
  INFO("incr: " << batch.Outcome(incr_n).status().ToString());
  CHECK(batch.Outcome(incr_n).status().IsNotFound());  // as after the single call
  CHECK(batch.Outcome(add_n).ok());
  CHECK(batch.Outcome(set_m).IsTooLarge());
  CHECK(batch.Outcome(append_m).IsNotStored());
  CHECK(batch.Outcome(read_m).miss());
  // What the batch wrote after the refusal stays.
  CHECK(cache->Get("n").value_or("") == "fresh");
  CHECK(cache->Get("m").miss());
}

TEST_CASE("a value too large to read in a batch is its key's error, not the keys' after it",
          "[memcached][batch]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  const Protocol protocol = AnyProtocol();
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  std::unique_ptr<Cache> writer = CacheOver(OptionsFor(servers, protocol));
  REQUIRE(writer->Set("before", std::string("small")).ok());
  REQUIRE(writer->Set("big", std::string(700 * 1000, 'b')).ok());
  REQUIRE(writer->Set("after", std::string("small")).ok());
  MemcachedOptions options = OptionsFor(servers, protocol);
  options.max_item_size = 100 * 1000;  // a reader whose limit is below the stored value
  std::unique_ptr<Cache> reader = CacheOver(options);

  const std::vector<Lookup<std::string>> got =
      reader->GetMulti<std::string>({"before", "missing", "big", "after"});
  REQUIRE(got.size() == 4);
  CHECK(got[0].value_or("") == "small");
  // A miss is known only from the end of the replies, which never came.
  CHECK(got[1].status().IsIoError());
  INFO("big: " << got[2].status().ToString() << "; after: " << got[3].status().ToString());
  CHECK(got[2].status().IsTooLarge());
  // Left unanswered when the connection went with the value: not a size error of its own.
  CHECK(got[3].status().IsIoError());
  CHECK(got[3].status().message().find("not answered") != std::string_view::npos);
  // Alone, each answers for itself.
  CHECK(reader->Get("after").value_or("") == "small");
  CHECK(reader->Get("big").status().IsTooLarge());
}

TEST_CASE("noreply in a Cache batch: text loses a write's failure, meta reports it",
          "[memcached][batch][noreply]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  const Protocol protocol = AnyProtocol();
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers, protocol));
  REQUIRE(cache->Set("k", std::string("v")).ok());

  Batch batch(*cache);
  batch.set_noreply(true);
  const BatchWrite add = batch.Add("k", std::string("w"));      // not stored: k exists
  const BatchWrite set = batch.Set("fresh", std::string("x"));  // stored
  const BatchRead<std::string> read = batch.Get("fresh");       // reads always wait
  cache->Run(batch);
  if (protocol == Protocol::kMeta) {
    CHECK(batch.Outcome(add).IsNotStored());
  } else {
    CHECK(batch.Outcome(add).ok());  // sent; the text protocol says nothing more
  }
  CHECK(batch.Outcome(set).ok());
  CHECK(batch.Outcome(read).value_or("") == "x");
  CHECK(cache->Get("k").value_or("") == "v");
}

TEST_CASE("a text batch of noreply writes only leaves no reply for the next Get to misread",
          "[memcached][batch][noreply]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  MemcachedOptions o = OptionsFor(servers, Protocol::kText);
  o.pool.pool_size = 1;  // the Get below borrows the batch's own connection
  std::unique_ptr<Cache> cache = CacheOver(o);
  REQUIRE(cache->Set("k", std::string("v")).ok());

  Batch batch(*cache);
  batch.set_noreply(true);
  const BatchWrite add = batch.Add("k", std::string("w"));  // NOT_STORED, unsaid
  const BatchWrite set = batch.Set("other", std::string("x"));
  const BatchWrite removed = batch.Remove("absent");  // NOT_FOUND, unsaid
  const BatchWrite appended = batch.Append("absent", "y");  // NOT_STORED, unsaid
  cache->Run(batch);
  CHECK(batch.Outcome(add).ok());
  CHECK(batch.Outcome(set).ok());
  CHECK(batch.Outcome(removed).ok());
  CHECK(batch.Outcome(appended).ok());
  for (int i = 0; i < 3; ++i) {  // each on the one pooled connection
    CHECK(cache->Get("k").value_or("") == "v");
    CHECK(cache->Get("other").value_or("") == "x");
    CHECK(cache->Get("absent").miss());
  }
}

}  // namespace cachet::memcached::test

namespace cachet::memcached::test {

// A read's reply may arrive while the noreply writes after it still go out: it
// must not end the exchange before they are sent (both protocols).
TEST_CASE("a batch ending in large noreply writes is sent whole", "[memcached][batch][noreply]") {
  REQUIRE(cachet::test::HaveMemcached());
  const Protocol protocol = AnyProtocol();
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers, protocol));
  REQUIRE(cache->Set("a", std::string("A")).ok());
  Batch batch(*cache);
  const BatchRead<std::string> read = batch.Get("a");
  const std::string big(900 << 10, 'b');  // under memcached's 1 MiB items
  std::vector<BatchWrite> writes;
  for (int i = 0; i < 24; ++i) {
    writes.push_back(batch.Set("big" + std::to_string(i), big));
    batch.Noreply(writes.back());
  }
  cache->Run(batch);
  CHECK(batch.Outcome(read).value_or("") == "A");
  for (const BatchWrite& write : writes) {
    INFO(batch.Outcome(write).ToString());
    CHECK(batch.Outcome(write).ok());
  }
  CHECK(cache->Get("big23").value_or("").size() == big.size());
}

}  // namespace cachet::memcached::test
