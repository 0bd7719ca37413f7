// Distribution: which server of a pool holds a key.
//
// Four schemes, each reproducing a real client's placement exactly, so cachet
// shares a memcached pool with other clients (vectors in tests/data/vectors/):
//   ketama           libmemcached KETAMA_WEIGHTED (= libketama, twemproxy): MD5 ring,
//                    160 points per server scaled by weight, "host-i" for port 11211
//   modula           libmemcached MODULA with its CRC hash: hash % server count
//   cache-memcached  Perl Cache::Memcached (and ::Fast with ketama_points 0): buckets
//                    of servers repeated `weight` times, indexed by the CRC hash
//   cmf-ketama       Perl Cache::Memcached::Fast with ketama_points P (CRC32 ring)
// The host hashed is the configured text: no DNS. A Distribution is immutable
// after construction and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/net/endpoint.h"
#include "cachet/result.h"

namespace cachet::net {

enum class DistributionKind : std::uint8_t { kKetama, kModula, kCacheMemcached, kCmfKetama };

// "ketama" | "modula" | "cache-memcached" | "cmf-ketama"; kConfigError otherwise.
CACHET_EXPORT Result<DistributionKind> ParseDistributionKind(std::string_view name);
CACHET_EXPORT std::string_view DistributionKindName(DistributionKind kind) noexcept;

// The key hashes, public so tests compare them with the vectors' hash columns.
// First 4 bytes of MD5(key), little-endian (ketama).
CACHET_EXPORT std::uint32_t KetamaKeyHash(std::string_view key) noexcept;
// zlib's CRC-32 of the key (cmf-ketama).
CACHET_EXPORT std::uint32_t Crc32(std::string_view key) noexcept;
// (CRC-32 >> 16) & 0x7fff: libmemcached's CRC hash and Cache::Memcached's.
CACHET_EXPORT std::uint32_t CacheMemcachedHash(std::string_view key) noexcept;

class CACHET_EXPORT Distribution {
 public:
  virtual ~Distribution();

  // The server index for `key`. REQUIRES: at least one server.
  virtual std::size_t ServerFor(std::string_view key) const noexcept = 0;

  // The first server for `key` whose index is not excluded, walking on from the
  // key's own place (the next point of a ring, the next bucket otherwise).
  // Returns `npos` when every server is excluded. Used for failover.
  virtual std::size_t ServerFor(std::string_view key,
                                std::span<const bool> excluded) const noexcept = 0;

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  // `cmf_points` is ketama_points for kCmfKetama (Cache::Memcached::Fast's 160 by
  // default); other kinds ignore it. REQUIRES: servers is not empty.
  static std::unique_ptr<Distribution> Create(DistributionKind kind,
                                              std::span<const ServerAddress> servers,
                                              std::uint32_t cmf_points = 160);
};

// A consistent-hash ring of 32-bit points, each owned by a server index.
class CACHET_EXPORT HashRing : public Distribution {
 public:
  struct Point {
    std::uint32_t hash;
    std::uint32_t server;
  };

  std::size_t ServerFor(std::string_view key) const noexcept override;
  std::size_t ServerFor(std::string_view key,
                        std::span<const bool> excluded) const noexcept override;

  std::span<const Point> points() const noexcept { return points_; }

 protected:
  // Sorts by (hash, server): equal points keep the lower server index first.
  void SortPoints();
  virtual std::uint32_t HashKey(std::string_view key) const noexcept = 0;
  std::size_t FirstPointAtOrAfter(std::uint32_t hash) const noexcept;

  std::vector<Point> points_;
};

// libmemcached's weighted ketama (see PROTOCOLS.md): MD5 points of "host:port-i",
// or "host-i" when the port is 11211.
class CACHET_EXPORT KetamaRing final : public HashRing {
 public:
  explicit KetamaRing(std::span<const ServerAddress> servers);
  // The points a server gets: floor(w/total * 40 * n + 1e-10), in float, times 4.
  static std::uint32_t PointsFor(std::uint32_t weight, std::uint32_t total_weight,
                                 std::size_t server_count) noexcept;

 private:
  std::uint32_t HashKey(std::string_view key) const noexcept override;
};

// Cache::Memcached::Fast's ketama: CRC32 points chained from host "\0" port.
class CACHET_EXPORT CmfKetamaRing final : public HashRing {
 public:
  CmfKetamaRing(std::span<const ServerAddress> servers, std::uint32_t points_per_weight);

 private:
  std::uint32_t HashKey(std::string_view key) const noexcept override;
};

// Cache::Memcached's buckets: each server repeated `weight` times, in order.
class CACHET_EXPORT CacheMemcachedBuckets final : public Distribution {
 public:
  explicit CacheMemcachedBuckets(std::span<const ServerAddress> servers);
  std::size_t ServerFor(std::string_view key) const noexcept override;
  std::size_t ServerFor(std::string_view key,
                        std::span<const bool> excluded) const noexcept override;

 private:
  std::vector<std::uint32_t> buckets_;
};

// libmemcached MODULA with the CRC hash: CacheMemcachedHash(key) % server count.
class CACHET_EXPORT Modula final : public Distribution {
 public:
  explicit Modula(std::size_t server_count);
  std::size_t ServerFor(std::string_view key) const noexcept override;
  std::size_t ServerFor(std::string_view key,
                        std::span<const bool> excluded) const noexcept override;

 private:
  std::size_t server_count_;
};

}  // namespace cachet::net
