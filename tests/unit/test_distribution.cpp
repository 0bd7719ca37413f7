// Key placement: every distribution reproduces the real clients' vectors exactly.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cachet/net/distribution.h"

namespace cachet::net {
namespace {

// One vectors/*.tsv file: column name -> values, row by row.
struct VectorTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  std::size_t Column(const std::string& name) const {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == name) return i;
    }
    FAIL("no column " << name);
    return 0;
  }
};

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

VectorTable ReadVectors(const std::string& file) {
  std::ifstream in(std::string(CACHET_SOURCE_DIR) + "/tests/data/vectors/" + file);
  REQUIRE(in.good());
  VectorTable table;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (table.columns.empty()) {
      table.columns = SplitTabs(line);
    } else {
      table.rows.push_back(SplitTabs(line));
      REQUIRE(table.rows.back().size() == table.columns.size());
    }
  }
  REQUIRE(table.rows.size() == 1000);
  return table;
}

std::vector<ServerAddress> VectorServers(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2) {
  return {{"127.0.0.1", 21211, w0}, {"127.0.0.1", 21212, w1}, {"127.0.0.1", 21213, w2}};
}

// Every row's key lands on the column's server index.
void CheckColumn(const VectorTable& table, const std::string& column, const Distribution& dist) {
  std::size_t key = table.Column("key");
  std::size_t col = table.Column(column);
  int mismatches = 0;
  for (const auto& row : table.rows) {
    std::size_t expected = std::stoul(row[col]);
    if (dist.ServerFor(row[key]) != expected) {
      ++mismatches;
      UNSCOPED_INFO(column << ": " << row[key] << " expected " << expected);
    }
  }
  CHECK(mismatches == 0);
}

void CheckHashColumn(const VectorTable& table, const std::string& column,
                     std::uint32_t (*hash)(std::string_view) noexcept) {
  std::size_t key = table.Column("key");
  std::size_t col = table.Column(column);
  for (const auto& row : table.rows) {
    INFO(row[key]);
    CHECK(hash(row[key]) == std::stoul(row[col], nullptr, 16));
  }
}

}  // namespace

TEST_CASE("MD5 key hash matches RFC 1321 digests", "[distribution]") {
  // First four digest bytes, little-endian, of the RFC's test suite digests.
  CHECK(KetamaKeyHash("") == 0xd98c1dd4u);                // d41d8cd9...
  CHECK(KetamaKeyHash("abc") == 0x98500190u);             // 90015098...
  CHECK(KetamaKeyHash("message digest") == 0x7d696bf9u);  // f96b697d...
  CHECK(KetamaKeyHash("1234567890123456789012345678901234567890123456789012345678901234567890"
                      "1234567890") == 0xa2f4ed57u);  // 57edf4a2..., two blocks
}

TEST_CASE("ketama reproduces libmemcached", "[distribution]") {
  VectorTable table = ReadVectors("ketama-libmemcached.tsv");
  CheckHashColumn(table, "md5_hash", &KetamaKeyHash);
  auto equal = VectorServers(1, 1, 1);
  auto weighted = VectorServers(1, 2, 3);
  CheckColumn(table, "ketama", KetamaRing(equal));
  CheckColumn(table, "ketama_w123", KetamaRing(weighted));
  CheckColumn(table, "modula_crc", Modula(3));
  CheckColumn(table, "ketama", *Distribution::Create(DistributionKind::kKetama, equal));
}

TEST_CASE("ketama point counts follow libmemcached's float rule", "[distribution]") {
  CHECK(KetamaRing::PointsFor(1, 3, 3) == 160);
  CHECK(KetamaRing::PointsFor(1, 6, 3) == 80);
  CHECK(KetamaRing::PointsFor(2, 6, 3) == 160);
  CHECK(KetamaRing::PointsFor(3, 6, 3) == 240);
  KetamaRing ring(VectorServers(1, 2, 3));
  CHECK(ring.points().size() == 480);
}

TEST_CASE("ketama leaves port 11211 out of the hashed label", "[distribution]") {
  auto has_point = [](const KetamaRing& ring, std::uint32_t hash) {
    for (const auto& p : ring.points()) {
      if (p.hash == hash) return true;
    }
    return false;
  };
  std::vector<ServerAddress> default_port = {{"10.0.0.1", 11211, 1}};
  KetamaRing a(default_port);
  CHECK(has_point(a, KetamaKeyHash("10.0.0.1-0")));
  CHECK(has_point(a, KetamaKeyHash("10.0.0.1-39")));
  CHECK_FALSE(has_point(a, KetamaKeyHash("10.0.0.1:11211-0")));

  std::vector<ServerAddress> other_port = {{"10.0.0.1", 11212, 1}};
  KetamaRing b(other_port);
  CHECK(has_point(b, KetamaKeyHash("10.0.0.1:11212-0")));
  CHECK_FALSE(has_point(b, KetamaKeyHash("10.0.0.1-0")));
}

TEST_CASE("cache-memcached reproduces Cache::Memcached and ::Fast compat", "[distribution]") {
  VectorTable table = ReadVectors("cache-memcached-bucket.tsv");
  CheckHashColumn(table, "crc32", &Crc32);
  CacheMemcachedBuckets equal(VectorServers(1, 1, 1));
  CacheMemcachedBuckets weighted(VectorServers(1, 2, 3));
  CheckColumn(table, "cm_bucket", equal);
  CheckColumn(table, "cm_bucket_w123", weighted);
  CheckColumn(table, "cmf_compat", equal);
  CheckColumn(table, "cmf_compat_w123", weighted);
}

TEST_CASE("cmf-ketama reproduces Cache::Memcached::Fast", "[distribution]") {
  VectorTable table = ReadVectors("ketama-cmfast.tsv");
  CheckHashColumn(table, "crc32", &Crc32);
  CheckColumn(table, "cmfast", CmfKetamaRing(VectorServers(1, 1, 1), 160));
  CheckColumn(table, "cmfast_w123", CmfKetamaRing(VectorServers(1, 2, 3), 160));
}

TEST_CASE("failover never picks an excluded server", "[distribution]") {
  auto servers = VectorServers(1, 1, 1);
  for (auto kind : {DistributionKind::kKetama, DistributionKind::kModula,
                    DistributionKind::kCacheMemcached, DistributionKind::kCmfKetama}) {
    auto dist = Distribution::Create(kind, servers);
    bool excluded[3] = {false, true, false};
    bool all[3] = {true, true, true};
    for (int i = 0; i < 200; ++i) {
      std::string key = "key" + std::to_string(i);
      std::size_t home = dist->ServerFor(key);
      std::size_t moved = dist->ServerFor(key, excluded);
      CHECK(moved != 1);
      if (home != 1) CHECK(moved == home);  // only the dead server's keys move
      CHECK(dist->ServerFor(key, all) == Distribution::npos);
    }
  }
}

TEST_CASE("distribution names parse", "[distribution]") {
  CHECK(*ParseDistributionKind("cmf-ketama") == DistributionKind::kCmfKetama);
  CHECK(DistributionKindName(DistributionKind::kCacheMemcached) == "cache-memcached");
  CHECK(ParseDistributionKind("consistent").status().IsConfigError());
}

}  // namespace cachet::net
