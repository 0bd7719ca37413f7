// The consistent-hash rings: libmemcached's weighted ketama and
// Cache::Memcached::Fast's CRC32 ring (placements checked against tests/data/vectors/).
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "cachet/net/distribution.h"
#include "net/md5.h"

namespace cachet::net {

void HashRing::SortPoints() {
  std::sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.server < b.server;
  });
}

std::size_t HashRing::FirstPointAtOrAfter(std::uint32_t hash) const noexcept {
  auto it = std::lower_bound(points_.begin(), points_.end(), hash,
                             [](const Point& p, std::uint32_t h) { return p.hash < h; });
  return it == points_.end() ? 0 : static_cast<std::size_t>(it - points_.begin());
}

std::size_t HashRing::ServerFor(std::string_view key) const noexcept {
  return points_[FirstPointAtOrAfter(HashKey(key))].server;
}

std::size_t HashRing::ServerFor(std::string_view key,
                                std::span<const bool> excluded) const noexcept {
  std::size_t start = FirstPointAtOrAfter(HashKey(key));
  for (std::size_t step = 0; step < points_.size(); ++step) {
    std::uint32_t server = points_[(start + step) % points_.size()].server;
    if (server >= excluded.size() || !excluded[server]) return server;
  }
  return npos;
}

std::uint32_t KetamaRing::PointsFor(std::uint32_t weight, std::uint32_t total_weight,
                                    std::size_t server_count) noexcept {
  // Single-precision float on purpose: libmemcached computes it so, and the
  // rounding decides the point count for uneven weights.
  float share = static_cast<float>(weight) / static_cast<float>(total_weight);
  float quarter = std::floor(share * 40.0f * static_cast<float>(server_count) + 1e-10f);
  return static_cast<std::uint32_t>(quarter) * 4;
}

KetamaRing::KetamaRing(std::span<const ServerAddress> servers) {
  std::uint32_t total = 0;
  for (const ServerAddress& s : servers) total += s.weight;
  std::string label;
  for (std::uint32_t index = 0; index < servers.size(); ++index) {
    const ServerAddress& s = servers[index];
    // libmemcached leaves the default port out of the hashed label.
    std::string prefix = s.port == 11211 ? s.host : s.HostPort();
    std::uint32_t digests = PointsFor(s.weight, total, servers.size()) / 4;
    for (std::uint32_t k = 0; k < digests; ++k) {
      label = prefix + "-" + std::to_string(k);
      Md5Digest d = Md5(label);
      for (int a = 0; a < 4; ++a) {
        std::uint32_t hash = std::uint32_t{d[4 * a]} | std::uint32_t{d[4 * a + 1]} << 8 |
                             std::uint32_t{d[4 * a + 2]} << 16 | std::uint32_t{d[4 * a + 3]} << 24;
        points_.push_back({hash, index});
      }
    }
  }
  SortPoints();
}

std::uint32_t KetamaRing::HashKey(std::string_view key) const noexcept {
  return KetamaKeyHash(key);
}

namespace {

std::uint32_t CrcContinue(std::uint32_t crc, const void* data, std::size_t size) {
  return static_cast<std::uint32_t>(
      crc32(crc, static_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

}  // namespace

CmfKetamaRing::CmfKetamaRing(std::span<const ServerAddress> servers,
                             std::uint32_t points_per_weight) {
  for (std::uint32_t index = 0; index < servers.size(); ++index) {
    const ServerAddress& s = servers[index];
    // Cache::Memcached::Fast splits "host:port" at its last ':' and hashes both
    // halves with a NUL between them.
    std::string address = s.HostPort();
    std::size_t colon = address.rfind(':');
    std::string host = address.substr(0, colon);
    std::string port = address.substr(colon + 1);
    std::uint32_t seed = CrcContinue(0, host.data(), host.size());
    seed = CrcContinue(seed, "", 1);
    seed = CrcContinue(seed, port.data(), port.size());
    auto count = static_cast<std::uint32_t>(points_per_weight * s.weight + 0.5);
    std::uint32_t point = 0;
    for (std::uint32_t k = 0; k < count; ++k) {
      unsigned char bytes[4];
      for (int i = 0; i < 4; ++i) bytes[i] = static_cast<unsigned char>(point >> (8 * i));
      point = CrcContinue(seed, bytes, sizeof(bytes));
      points_.push_back({point, index});
    }
  }
  SortPoints();
}

std::uint32_t CmfKetamaRing::HashKey(std::string_view key) const noexcept { return Crc32(key); }

}  // namespace cachet::net
