// Distribution kinds, the key hashes, and the two bucket-based schemes.
#include "cachet/net/distribution.h"

#include <zlib.h>

#include <string>

#include "net/md5.h"

namespace cachet::net {

Result<DistributionKind> ParseDistributionKind(std::string_view name) {
  if (name == "ketama") return DistributionKind::kKetama;
  if (name == "modula") return DistributionKind::kModula;
  if (name == "cache-memcached") return DistributionKind::kCacheMemcached;
  if (name == "cmf-ketama") return DistributionKind::kCmfKetama;
  return Status::ConfigError("unknown distribution '" + std::string(name) +
                             "' (ketama | modula | cache-memcached | cmf-ketama)");
}

std::string_view DistributionKindName(DistributionKind kind) noexcept {
  switch (kind) {
    case DistributionKind::kKetama:
      return "ketama";
    case DistributionKind::kModula:
      return "modula";
    case DistributionKind::kCacheMemcached:
      return "cache-memcached";
    case DistributionKind::kCmfKetama:
      return "cmf-ketama";
  }
  return "unknown";
}

std::uint32_t KetamaKeyHash(std::string_view key) noexcept {
  Md5Digest d = Md5(key);
  return std::uint32_t{d[0]} | std::uint32_t{d[1]} << 8 | std::uint32_t{d[2]} << 16 |
         std::uint32_t{d[3]} << 24;
}

std::uint32_t Crc32(std::string_view key) noexcept {
  return static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(key.data()), static_cast<uInt>(key.size())));
}

std::uint32_t CacheMemcachedHash(std::string_view key) noexcept {
  return (Crc32(key) >> 16) & 0x7fff;
}

Distribution::~Distribution() = default;

std::unique_ptr<Distribution> Distribution::Create(DistributionKind kind,
                                                   std::span<const ServerAddress> servers,
                                                   std::uint32_t cmf_points) {
  switch (kind) {
    case DistributionKind::kKetama:
      return std::make_unique<KetamaRing>(servers);
    case DistributionKind::kModula:
      return std::make_unique<Modula>(servers.size());
    case DistributionKind::kCacheMemcached:
      return std::make_unique<CacheMemcachedBuckets>(servers);
    case DistributionKind::kCmfKetama:
      return std::make_unique<CmfKetamaRing>(servers, cmf_points);
  }
  return std::make_unique<Modula>(servers.size());
}

namespace {

// Walks on from `start` over `count` slots to the first whose server is not
// excluded. Failover for the bucket schemes.
template <class ServerOfSlot>
std::size_t NextIncluded(std::size_t start, std::size_t count, std::span<const bool> excluded,
                         ServerOfSlot server_of_slot) {
  for (std::size_t step = 0; step < count; ++step) {
    std::size_t server = server_of_slot((start + step) % count);
    if (server >= excluded.size() || !excluded[server]) return server;
  }
  return Distribution::npos;
}

}  // namespace

CacheMemcachedBuckets::CacheMemcachedBuckets(std::span<const ServerAddress> servers) {
  for (std::uint32_t i = 0; i < servers.size(); ++i) {
    buckets_.insert(buckets_.end(), servers[i].weight, i);
  }
}

std::size_t CacheMemcachedBuckets::ServerFor(std::string_view key) const noexcept {
  return buckets_[CacheMemcachedHash(key) % buckets_.size()];
}

std::size_t CacheMemcachedBuckets::ServerFor(std::string_view key,
                                             std::span<const bool> excluded) const noexcept {
  return NextIncluded(CacheMemcachedHash(key) % buckets_.size(), buckets_.size(), excluded,
                      [this](std::size_t slot) { return std::size_t{buckets_[slot]}; });
}

Modula::Modula(std::size_t server_count) : server_count_(server_count) {}

std::size_t Modula::ServerFor(std::string_view key) const noexcept {
  return CacheMemcachedHash(key) % server_count_;
}

std::size_t Modula::ServerFor(std::string_view key, std::span<const bool> excluded) const noexcept {
  return NextIncluded(ServerFor(key), server_count_, excluded,
                      [](std::size_t slot) { return slot; });
}

}  // namespace cachet::net
