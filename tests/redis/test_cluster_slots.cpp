// Redis Cluster placement without a server: CRC16 and hash tags (expected slots
// recorded from redis-server 7.0.15's CLUSTER KEYSLOT), slot maps from real CLUSTER
// SHARDS / SLOTS replies in RESP2 and RESP3, and MOVED/ASK parsing.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "cluster_slots.h"
#include "redis_backend.h"
#include "resp_parser.h"

using cachet::Status;
using cachet::redis::ClusterNode;
using cachet::redis::Crc16Xmodem;
using cachet::redis::HashTag;
using cachet::redis::KeySlot;
using cachet::redis::kSlotCount;
using cachet::redis::LeaseKeyOf;
using cachet::redis::NodePort;
using cachet::redis::ParseRedirect;
using cachet::redis::Redirect;
using cachet::redis::RespParser;
using cachet::redis::SlotMap;
using cachet::redis::SlotTag;

namespace {

// A reply captured from a 3-master cluster on ports 17401..17403.
std::string ReadReply(const std::string& name) {
  std::ifstream in(std::string(CACHET_SOURCE_DIR) + "/tests/redis/data/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The three-master layout every captured reply describes.
void CheckThreeMasters(const SlotMap& map) {
  CHECK(map.covered_slots() == 16384);
  CHECK(map.primaries().size() == 3);
  REQUIRE(map.PrimaryFor(0) != nullptr);
  CHECK(map.PrimaryFor(0)->port == 17401);
  CHECK(map.PrimaryFor(5460)->port == 17401);
  CHECK(map.PrimaryFor(5461)->port == 17402);
  CHECK(map.PrimaryFor(10922)->port == 17402);
  CHECK(map.PrimaryFor(10923)->port == 17403);
  CHECK(map.PrimaryFor(16383)->port == 17403);
  CHECK(map.PrimaryFor(0)->host == "127.0.0.1");
  CHECK(map.PrimaryFor(0)->id == "a484717eca1a4ed6647c6c1cfbff3f01e80070c8");
  CHECK(map.PrimaryFor(16384) == nullptr);
}

}  // namespace

TEST_CASE("CRC16/XMODEM matches the standard check value", "[cluster]") {
  CHECK(Crc16Xmodem("123456789") == 0x31C3);
  CHECK(Crc16Xmodem("") == 0);
}

TEST_CASE("hash tags follow the cluster spec", "[cluster]") {
  CHECK(HashTag("{user1000}.following") == "user1000");
  CHECK(HashTag("foo{}{bar}") == "foo{}{bar}");
  CHECK(HashTag("foo{{bar}}zap") == "{bar");
  CHECK(HashTag("foo{bar}{zap}") == "bar");
  CHECK(HashTag("a{b") == "a{b");
  CHECK(HashTag("plain") == "plain");
}

TEST_CASE("key slots match redis-server's CLUSTER KEYSLOT", "[cluster]") {
  CHECK(KeySlot("foo") == 12182);
  CHECK(KeySlot("bar") == 5061);
  CHECK(KeySlot("hello") == 866);
  CHECK(KeySlot("{user1000}.following") == 3443);
  CHECK(KeySlot("{user1000}.followers") == 3443);
  CHECK(KeySlot("foo{}{bar}") == 8363);
  CHECK(KeySlot("foo{{bar}}zap") == 4015);
  CHECK(KeySlot("foo{bar}{zap}") == 5061);
  CHECK(KeySlot("{}") == 15257);
  CHECK(KeySlot("a{b") == 13340);
  CHECK(KeySlot("") == 0);
  CHECK(KeySlot("123456789") == 12739);
  CHECK(KeySlot("user:1000") == 1649);
  CHECK(KeySlot("key:0") == 2592);
  CHECK(KeySlot("key:9999") == 2633);
}

TEST_CASE("every slot has a tag of digits that lands in it", "[cluster]") {
  CHECK(SlotTag(KeySlot("0")) == "0");  // the smallest number in its slot
  CHECK(SlotTag(7866) == "20658");      // the slot of "a}b"
  for (std::uint16_t slot = 0; slot < kSlotCount; ++slot) {
    const std::string tag = SlotTag(slot);
    REQUIRE(!tag.empty());
    REQUIRE(tag.find_first_not_of("0123456789") == std::string::npos);
    REQUIRE(KeySlot("{" + tag + "}anything") == slot);
  }
}

TEST_CASE("a lease's lock key shares its key's slot, braces or not", "[cluster]") {
  CHECK(LeaseKeyOf("k") == "{k}#lease");
  CHECK(LeaseKeyOf("{user1}.name") == "{user1}.name#lease");
  CHECK(LeaseKeyOf("a{b") == "{a{b}#lease");
  CHECK(LeaseKeyOf("a}b") == "{20658}a}b#lease");
  // Keys Redis hashes whole although they hold braces: no tag, or an empty one.
  for (const char* key : {"k", "{user1}.name", "a{b", "a}b", "}", "{", "{}", "x{}y", "a}b{c}",
                          "{}{x}", "}{", "a{}}b", "{{}}", "user:1000", "ns:{}:{a}"}) {
    CAPTURE(key);
    const std::string lock = LeaseKeyOf(key);
    CHECK(KeySlot(lock) == KeySlot(key));
    CHECK(lock.ends_with("#lease"));
    CHECK(lock.find(key) != std::string::npos);  // one lock per key
  }
}

TEST_CASE("the slot map is built from CLUSTER SHARDS in RESP2 and RESP3", "[cluster]") {
  for (const char* file : {"cluster_shards_resp2.resp", "cluster_shards_resp3.resp"}) {
    CAPTURE(file);
    std::string bytes = ReadReply(file);
    REQUIRE(!bytes.empty());
    RespParser parser;
    REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
    SlotMap map;
    REQUIRE(SlotMap::FromShards(parser.reply().root(), "10.0.0.1", NodePort::kPlain, &map).ok());
    CheckThreeMasters(map);
  }
}

TEST_CASE("the slot map is built from CLUSTER SLOTS", "[cluster]") {
  std::string bytes = ReadReply("cluster_slots_resp2.resp");
  RespParser parser;
  REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
  SlotMap map;
  REQUIRE(SlotMap::FromSlots(parser.reply().root(), "10.0.0.1", &map).ok());
  CheckThreeMasters(map);
}

TEST_CASE("a shard's replicas and failed primaries are not used", "[cluster]") {
  // One shard: a failed old primary, then a replica, then the online primary with
  // an unknown endpoint (meaning the host that was asked).
  std::string bytes =
      "*1\r\n*4\r\n$5\r\nslots\r\n*4\r\n:0\r\n:99\r\n:200\r\n:16383\r\n$5\r\nnodes\r\n*3\r\n"
      "*6\r\n$4\r\nport\r\n:1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$6\r\nhealth\r\n$4\r\nfail\r\n"
      "*6\r\n$4\r\nport\r\n:2\r\n$4\r\nrole\r\n$7\r\nreplica\r\n$6\r\nhealth\r\n$6\r\nonline\r\n"
      "*6\r\n$4\r\nport\r\n:3\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$8\r\nendpoint\r\n$1\r\n?\r\n";
  RespParser parser;
  REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
  SlotMap map;
  REQUIRE(SlotMap::FromShards(parser.reply().root(), "seed.example", NodePort::kPlain, &map).ok());
  CHECK(map.covered_slots() == 100 + 16184);
  REQUIRE(map.PrimaryFor(50) != nullptr);
  CHECK(map.PrimaryFor(50)->port == 3);
  CHECK(map.PrimaryFor(50)->host == "seed.example");
  CHECK(map.PrimaryFor(150) == nullptr);
}

// One shard serving every slot, whose online primary lists `ports` (RESP2
// field-value pairs such as "$4\r\nport\r\n:7000\r\n"), `count` of them.
namespace {

std::string OneShard(int count, const std::string& ports) {
  return "*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*" +
         std::to_string(2 * (3 + count)) +
         "\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
         "$6\r\nhealth\r\n$6\r\nonline\r\n" +
         ports;
}

Status ShardsWith(const std::string& bytes, NodePort port_kind, SlotMap* map) {
  RespParser parser;
  REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
  return SlotMap::FromShards(parser.reply().root(), "h", port_kind, map);
}

}  // namespace

TEST_CASE("a client over TLS reads a shard primary's tls-port", "[cluster]") {
  const std::string plain = "$4\r\nport\r\n:7000\r\n";
  const std::string tls = "$8\r\ntls-port\r\n:7100\r\n";
  SlotMap map;
  SECTION("a node with both ports: each client takes its own") {
    REQUIRE(ShardsWith(OneShard(2, plain + tls), NodePort::kTls, &map).ok());
    CHECK(map.PrimaryFor(0)->port == 7100);
    REQUIRE(ShardsWith(OneShard(2, plain + tls), NodePort::kPlain, &map).ok());
    CHECK(map.PrimaryFor(16383)->port == 7000);
  }
  SECTION("a TLS-only node (no port field)") {
    REQUIRE(ShardsWith(OneShard(1, tls), NodePort::kTls, &map).ok());
    CHECK(map.PrimaryFor(5000)->port == 7100);
    CHECK(map.PrimaryFor(5000)->host == "127.0.0.1");
    CHECK(map.covered_slots() == kSlotCount);
    Status s = ShardsWith(OneShard(1, tls), NodePort::kPlain, &map);
    CHECK(s.IsUnavailable());
    CHECK(s.message().find("set tls = true") != std::string_view::npos);
  }
  SECTION("a plain node, asked by a TLS client") {
    Status s = ShardsWith(OneShard(1, plain), NodePort::kTls, &map);
    CHECK(s.IsUnavailable());
    CHECK(s.message().find("no tls-port") != std::string_view::npos);
  }
}

TEST_CASE("a malformed topology reply is a protocol error", "[cluster]") {
  for (std::string bytes :
       {"+OK\r\n", "*1\r\n*3\r\n:0\r\n:99999\r\n*2\r\n$1\r\nh\r\n:1\r\n",
        "*1\r\n*2\r\n:0\r\n:1\r\n", "*1\r\n*3\r\n:5\r\n:4\r\n*2\r\n$1\r\nh\r\n:1\r\n"}) {
    CAPTURE(bytes);
    RespParser parser;
    REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
    SlotMap map;
    CHECK(SlotMap::FromSlots(parser.reply().root(), "h", &map).IsProtocolError());
  }
  // Ports no server has, never wrapped into one that some server has, and a
  // slot two primaries claim.
  for (std::string bytes : {"*1\r\n*3\r\n:0\r\n:9\r\n*2\r\n$1\r\nh\r\n:65537\r\n",
                            "*1\r\n*3\r\n:0\r\n:9\r\n*2\r\n$1\r\nh\r\n:-1\r\n",
                            "*1\r\n*3\r\n:0\r\n:9\r\n*2\r\n$1\r\nh\r\n:0\r\n",
                            "*2\r\n*3\r\n:0\r\n:9\r\n*2\r\n$1\r\nh\r\n:1\r\n"
                            "*3\r\n:5\r\n:16383\r\n*2\r\n$1\r\nh\r\n:2\r\n"}) {
    CAPTURE(bytes);
    RespParser parser;
    REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
    SlotMap map;
    CHECK(SlotMap::FromSlots(parser.reply().root(), "h", &map).IsProtocolError());
  }
  for (std::string port : {":65536", ":70000", ":-5"}) {
    CAPTURE(port);
    SlotMap map;
    CHECK(ShardsWith(OneShard(1, "$4\r\nport\r\n" + port + "\r\n"), NodePort::kPlain, &map)
              .IsProtocolError());
  }
  std::string odd = "*1\r\n*4\r\n$5\r\nslots\r\n*1\r\n:0\r\n$5\r\nnodes\r\n*0\r\n";
  RespParser parser;
  REQUIRE(parser.Parse(odd) == RespParser::Outcome::kReply);
  SlotMap map;
  CHECK(SlotMap::FromShards(parser.reply().root(), "h", NodePort::kPlain, &map).IsProtocolError());
}

TEST_CASE("a MOVED updates one slot of the map", "[cluster]") {
  SlotMap map;
  map.Assign(7, ClusterNode{"127.0.0.1", 7000, ""});
  map.Assign(7, ClusterNode{"127.0.0.1", 7001, ""});
  map.Assign(8, ClusterNode{"127.0.0.1", 7000, ""});
  CHECK(map.PrimaryFor(7)->port == 7001);
  CHECK(map.PrimaryFor(8)->port == 7000);
  CHECK(map.primaries().size() == 2);
  CHECK(map.covered_slots() == 2);
}

TEST_CASE("MOVED and ASK errors are parsed", "[cluster]") {
  auto moved = ParseRedirect("MOVED 3999 127.0.0.1:6381", "x");
  REQUIRE(moved.has_value());
  CHECK(moved->kind == Redirect::Kind::kMoved);
  CHECK(moved->slot == 3999);
  CHECK(moved->node.host == "127.0.0.1");
  CHECK(moved->node.port == 6381);

  auto ask = ParseRedirect("ASK 16383 ::1:7000", "x");
  REQUIRE(ask.has_value());
  CHECK(ask->kind == Redirect::Kind::kAsk);
  CHECK(ask->node.host == "::1");
  CHECK(ask->node.port == 7000);

  auto same_host = ParseRedirect("MOVED 1 :7002", "10.1.2.3");
  REQUIRE(same_host.has_value());
  CHECK(same_host->node.host == "10.1.2.3");

  for (std::string_view bad :
       {"ERR wrong", "MOVED", "MOVED 3999", "MOVED x 1.2.3.4:5", "MOVED 16384 h:1", "ASK 1 h:0",
        "ASK 1 h:65536", "ASK 1 h", "MOVED -1 h:1", "TRYAGAIN Multiple keys"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseRedirect(bad, "x").has_value());
  }
}
