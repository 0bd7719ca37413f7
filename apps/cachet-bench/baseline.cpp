// The baseline target: sharded std::unordered_map under std::shared_mutex.
#include "baseline.h"

#include <array>
#include <charconv>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace cachet::bench {
namespace {

class BaselineMap {
 public:
  static constexpr std::size_t kShards = 16;

  // A shard on cache lines of its own, so two shards' locks never share one.
  struct alignas(64) Shard {
    std::shared_mutex mutex;
    std::unordered_map<std::string, std::string> items;
  };

  Shard& ShardOf(std::string_view key) {
    return shards_[(std::hash<std::string_view>{}(key) >> 40) % kShards];
  }

 private:
  std::array<Shard, kShards> shards_;
};

Status Unsupported() { return Status::Unsupported("the baseline map has no such operation"); }

class BaselineClient : public Client {
 public:
  explicit BaselineClient(std::shared_ptr<BaselineMap> map) : map_(std::move(map)) {}

  Status Get(std::string_view key, std::string* value) override {
    BaselineMap::Shard& shard = map_->ShardOf(key);
    std::shared_lock lock(shard.mutex);
    key_.assign(key);
    auto it = shard.items.find(key_);
    if (it == shard.items.end()) return Status::NotFound();
    value->assign(it->second);
    return Status::OK();
  }
  Status Set(std::string_view key, std::string_view value) override {
    BaselineMap::Shard& shard = map_->ShardOf(key);
    std::unique_lock lock(shard.mutex);
    key_.assign(key);
    shard.items[key_].assign(value);
    return Status::OK();
  }
  Status Remove(std::string_view key) override {
    BaselineMap::Shard& shard = map_->ShardOf(key);
    std::unique_lock lock(shard.mutex);
    key_.assign(key);
    return shard.items.erase(key_) == 1 ? Status::OK() : Status::NotFound();
  }
  Status Incr(std::string_view key, std::uint64_t* value) override { return Add(key, true, value); }
  Status Decr(std::string_view key, std::uint64_t* value) override {
    return Add(key, false, value);
  }
  Status GetMulti(const std::vector<std::string>& keys, std::size_t* hits) override {
    *hits = 0;
    for (const std::string& key : keys) {
      Status s = Get(key, &read_);
      if (s.ok()) ++*hits;
    }
    return Status::OK();
  }
  Status GetJson(std::string_view, Json*) override { return Unsupported(); }
  Status SetJson(std::string_view, const Json&) override { return Unsupported(); }
  Status GetCompressed(std::string_view, std::string*) override { return Unsupported(); }
  Status SetCompressed(std::string_view, std::string_view) override { return Unsupported(); }
  Status IncrPipelined(std::string_view, std::size_t) override { return Unsupported(); }
  Status IncrNoreply(std::string_view) override { return Unsupported(); }

 private:
  // memcached's counter arithmetic on decimal text, under the shard's write lock.
  Status Add(std::string_view key, bool increment, std::uint64_t* value) {
    BaselineMap::Shard& shard = map_->ShardOf(key);
    std::unique_lock lock(shard.mutex);
    key_.assign(key);
    auto it = shard.items.find(key_);
    if (it == shard.items.end()) return Status::NotFound();
    std::uint64_t current = 0;
    const std::string& text = it->second;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), current);
    if (error != std::errc() || end != text.data() + text.size()) {
      return Status::InvalidArgument("not a counter");
    }
    current = increment ? current + 1 : (current == 0 ? 0 : current - 1);
    char digits[24];
    auto [last, ignored] = std::to_chars(digits, digits + sizeof digits, current);
    it->second.assign(digits, last);
    *value = current;
    return Status::OK();
  }

  std::shared_ptr<BaselineMap> map_;
  std::string key_;   // reused: the map is keyed by std::string
  std::string read_;  // GetMulti's values
};

}  // namespace

Target BaselineTarget() {
  auto map = std::make_shared<BaselineMap>();
  Target target;
  target.label = "baseline";
  target.source = "std::unordered_map + std::shared_mutex, 16 shards";
  target.connect = [map]() -> Result<std::unique_ptr<Client>> {
    return std::unique_ptr<Client>(std::make_unique<BaselineClient>(map));
  };
  return target;
}

}  // namespace cachet::bench
