// CacheClient: the Client interface over a cachet Cache, the column under test.
//
// Compressed scenarios go through a second Cache opened from the same config with
// a compressor (the config's own, or zstd when it names none), so the codec does
// the compression exactly as an application would have it done.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "client.h"

namespace cachet::bench {

class CacheClient : public Client {
 public:
  CacheClient(std::shared_ptr<Cache> cache, std::shared_ptr<Cache> compressing)
      : cache_(std::move(cache)), compressing_(std::move(compressing)) {}

  Status Get(std::string_view key, std::string* value) override;
  Status Set(std::string_view key, std::string_view value) override;
  Status Remove(std::string_view key) override;
  Status Incr(std::string_view key, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t* value) override;
  Status GetMulti(const std::vector<std::string>& keys, std::size_t* hits) override;
  Status GetJson(std::string_view key, Json* doc) override;
  Status SetJson(std::string_view key, const Json& doc) override;
  Status GetCompressed(std::string_view key, std::string* value) override;
  Status SetCompressed(std::string_view key, std::string_view value) override;
  Status IncrPipelined(std::string_view key, std::size_t count) override;
  Status IncrNoreply(std::string_view key) override;

 private:
  // The batch of the pipeline and noreply scenarios, made on first use.
  Batch& PipelineBatch();

  std::shared_ptr<Cache> cache_;
  std::shared_ptr<Cache> compressing_;
  std::unique_ptr<Batch> batch_;  // reused by IncrPipelined and IncrNoreply
  std::vector<BatchCounter> pipelined_;  // IncrPipelined's handles, reused likewise
  // GetMulti's answers, kept from call to call as an application reading in a
  // loop keeps them, so the values' buffers are reused rather than reallocated.
  std::vector<std::string_view> multi_keys_;
  std::vector<std::string> multi_values_;
  std::vector<Status> multi_statuses_;
};

}  // namespace cachet::bench
