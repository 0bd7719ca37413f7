// Cache::Run over a ring of two Tokyo Tyrant test servers: a server killed in the
// middle of a batch fails only its own operations, and a noreply set (putnr) in
// a batch is read back by the next one.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "tt_backend.h"
#include "tt_fixture.h"
#include "support/killed_server.h"

namespace cachet::tokyotyrant {
namespace {

using std::chrono::milliseconds;
// The longest a server may stay silent within a call, in these tests.
constexpr milliseconds kIoTimeout(3000);

// Values are strings, stored raw by the codec: no envelope is needed here.
std::unique_ptr<Cache> CacheOver(TokyoTyrantOptions options) {
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  return std::make_unique<Cache>(std::make_shared<TokyoTyrantBackend>(std::move(options)),
                                 codec.value(), CacheOptions{"app:", Ttl{0}, true});
}

}  // namespace

TEST_CASE("a tokyotyrant server killed in the middle of a Cache batch fails only its operations",
          "[tokyotyrant][batch][faults]") {
  Servers servers = StartServers(2);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers, kIoTimeout));
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& k : keys) REQUIRE(cache->Set(k, k).ok());
  // Where each key lives: server 0 alone has it or not.
  TokyoTyrantOptions first_only;
  first_only.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(servers[0]->port()), 1});
  TokyoTyrantBackend first(first_only);
  std::vector<bool> on_first;
  for (const std::string& k : keys) {
    Item item;
    on_first.push_back(first.Get("app:" + k, &item).ok());
  }

  // Paused, server 0 takes the batch into its socket but answers nothing; it is
  // killed while the batch waits, and server 1 answers meanwhile.
  cachet::test::KilledWhilePaused killer(*servers[0], milliseconds(200));
  Batch batch(*cache);
  std::vector<BatchRead<std::string>> reads;
  std::vector<BatchWrite> removes;
  for (const std::string& k : keys) {
    reads.push_back(batch.Get(k));
    removes.push_back(batch.Remove(k));
  }
  cache->Run(batch);
  killer.Join();

  int failed = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("key " << keys[i]);
    if (on_first[i]) {
      ++failed;
      CHECK(batch.Outcome(reads[i]).error());
      CHECK(batch.Outcome(removes[i]).IsError());
    } else {
      CHECK(batch.Outcome(reads[i]).value_or("") == keys[i]);
      CHECK(batch.Outcome(removes[i]).ok());
    }
  }
  CHECK(failed > 0);
  CHECK(failed < static_cast<int>(keys.size()));
}

TEST_CASE("a noreply set in a tokyotyrant batch is putnr, read back by the next batch",
          "[tokyotyrant][batch][noreply]") {
  Servers servers = StartServers(1);
  std::unique_ptr<Cache> cache = CacheOver(OptionsFor(servers, kIoTimeout));
  Batch batch(*cache);
  batch.set_noreply(true);
  std::vector<BatchWrite> sets;
  for (int i = 0; i < 10; ++i) sets.push_back(batch.Set("k" + std::to_string(i), "v"));
  cache->Run(batch);
  for (const BatchWrite& set : sets) CHECK(batch.Outcome(set).ok());
  batch.Clear();
  batch.set_noreply(false);
  std::vector<BatchRead<std::string>> reads;
  for (int i = 0; i < 10; ++i) reads.push_back(batch.Get("k" + std::to_string(i)));
  cache->Run(batch);
  for (const auto& read : reads) CHECK(batch.Outcome(read).value_or("") == "v");
}

TEST_CASE("a noreply set to a tokyotyrant server nobody listens on fails, never ok",
          "[tokyotyrant][batch][noreply]") {
  const test::RefusingPort refusing;
  TokyoTyrantOptions options;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(refusing.port()), 1});
  options.pool.connection.connect_timeout = milliseconds(2000);
  std::unique_ptr<Cache> cache = CacheOver(options);
  Batch batch(*cache);
  batch.set_noreply(true);
  const BatchWrite set = batch.Set("k", "v");
  const BatchWrite other = batch.Set("k2", "v");
  cache->Run(batch);
  // putnr has no reply, but a write that never went out is an error.
  CHECK(batch.Outcome(set).IsError());
  CHECK(batch.Outcome(other).IsError());
}

TEST_CASE("noreply add, append, remove and incr on tokyotyrant answer unsupported, unsent",
          "[tokyotyrant][batch][noreply]") {
  Servers servers = StartServers(1);
  TokyoTyrantOptions options = OptionsFor(servers, kIoTimeout);
  options.addint_counters = true;
  options.putcat_append = true;
  std::unique_ptr<Cache> cache = CacheOver(std::move(options));
  REQUIRE(cache->Set("present", std::string("v")).ok());
  Batch batch(*cache);
  batch.set_noreply(true);
  const BatchWrite added = batch.Add("fresh", std::string("x"));
  const BatchWrite appended = batch.Append("present", "+");
  const BatchWrite removed = batch.Remove("present");
  const BatchCounter counted = batch.Incr("n", 1);
  const BatchWrite set = batch.Set("s", std::string("y"));  // putnr
  cache->Run(batch);
  const std::pair<const Status*, const char*> refused[] = {
      {&batch.Outcome(added), "add"},
      {&batch.Outcome(appended), "append"},
      {&batch.Outcome(removed), "remove"},
      {&batch.StatusOf(counted), "incr"}};
  for (const auto& [status, name] : refused) {
    INFO(name);
    CHECK(status->IsUnsupported());
    const std::string message(status->message());
    CHECK(message.find("tokyotyrant") != std::string::npos);
    CHECK(message.find(name) != std::string::npos);
  }
  CHECK(batch.Outcome(counted).status().IsUnsupported());
  CHECK(batch.Outcome(set).ok());
  // None of the refused ones reached the server.
  CHECK(cache->Get("fresh").miss());
  CHECK(cache->Get("present").value_or("") == "v");
  CHECK(cache->Get("n").miss());
  CHECK(cache->Get("s").value_or("") == "y");
}

}  // namespace cachet::tokyotyrant
