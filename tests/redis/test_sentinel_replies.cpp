// The sentinels' replies read without a server (sentinel_client.h and the
// +switch-master link's reader, sentinel_watcher.h), from RESP2 bytes.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "resp_parser.h"
#include "sentinel_client.h"
#include "sentinel_watcher.h"

using cachet::redis::ReadMasterAddress;
using cachet::redis::ReadSwitchMaster;
using cachet::redis::ReadUsableReplicas;
using cachet::redis::RespParser;
using cachet::redis::RoleIsMaster;
using cachet::redis::SwitchReader;

namespace {

// Holds the parser whose reply a test reads.
struct Parsed {
  explicit Parsed(std::string_view text) : bytes(text) {
    REQUIRE(parser.Parse(bytes) == RespParser::Outcome::kReply);
    REQUIRE(parser.consumed() == bytes.size());
  }
  cachet::redis::RespValue root() const { return parser.reply().root(); }
  std::string bytes;
  RespParser parser;
};

std::string Bulk(std::string_view text) {
  return "$" + std::to_string(text.size()) + "\r\n" + std::string(text) + "\r\n";
}

// One replica's field list as SENTINEL REPLICAS gives it in RESP2.
std::string Replica(std::string_view port, std::string_view flags, std::string_view link) {
  return "*8\r\n" + Bulk("ip") + Bulk("127.0.0.1") + Bulk("port") + Bulk(port) + Bulk("flags") +
         Bulk(flags) + Bulk("master-link-status") + Bulk(link);
}

}  // namespace

TEST_CASE("sentinel replies: the master's address", "[unit][redis][sentinel]") {
  Parsed found("*2\r\n" + Bulk("127.0.0.1") + Bulk("6380"));
  auto address = ReadMasterAddress(found.root(), "s");
  REQUIRE(address.ok());
  CHECK(address->HostPort() == "127.0.0.1:6380");

  Parsed ipv6("*2\r\n" + Bulk("::1") + Bulk("6380"));
  REQUIRE(ReadMasterAddress(ipv6.root(), "s").ok());
  CHECK(ReadMasterAddress(ipv6.root(), "s")->host == "[::1]");

  Parsed unknown("*-1\r\n");
  CHECK(ReadMasterAddress(unknown.root(), "s").status().IsNotFound());
  for (std::string bad :
       {"*2\r\n" + Bulk("127.0.0.1") + Bulk("port"), "*2\r\n" + Bulk("127.0.0.1") + Bulk("70000"),
        "*1\r\n" + Bulk("127.0.0.1"), std::string(":1\r\n")}) {
    Parsed reply(bad);
    INFO(bad);
    CHECK(ReadMasterAddress(reply.root(), "s").status().IsProtocolError());
  }
}

TEST_CASE("sentinel replies: only replicas that are up and linked serve reads",
          "[unit][redis][sentinel]") {
  Parsed list("*4\r\n" + Replica("7001", "s_down,slave", "ok") + Replica("7002", "slave", "err") +
              Replica("7003", "slave,disconnected", "ok") + Replica("7004", "slave", "ok"));
  auto usable = ReadUsableReplicas(list.root(), "s");
  REQUIRE(usable.ok());
  REQUIRE(usable->size() == 1);
  CHECK((*usable)[0].HostPort() == "127.0.0.1:7004");

  Parsed none("*0\r\n");
  REQUIRE(ReadUsableReplicas(none.root(), "s").ok());
  CHECK(ReadUsableReplicas(none.root(), "s")->empty());
  Parsed wrong(":3\r\n");
  CHECK(ReadUsableReplicas(wrong.root(), "s").status().IsProtocolError());
}

TEST_CASE("sentinel replies: ROLE and +switch-master", "[unit][redis][sentinel]") {
  Parsed master("*3\r\n" + Bulk("master") + ":0\r\n*0\r\n");
  CHECK(RoleIsMaster(master.root()));
  Parsed replica("*5\r\n" + Bulk("slave") + Bulk("127.0.0.1") + ":6379\r\n" + Bulk("connected") +
                 ":0\r\n");
  CHECK_FALSE(RoleIsMaster(replica.root()));

  auto ours = ReadSwitchMaster("shop 127.0.0.1 6379 127.0.0.1 6380", "shop");
  REQUIRE(ours.ok());
  CHECK(ours->HostPort() == "127.0.0.1:6380");
  CHECK(ReadSwitchMaster("other 127.0.0.1 6379 127.0.0.1 6380", "shop").status().IsNotFound());
  CHECK(ReadSwitchMaster("shop 127.0.0.1 6379", "shop").status().IsProtocolError());
}

TEST_CASE("sentinel link: subscription, pongs and switch messages", "[unit][redis][sentinel]") {
  SwitchReader reader("shop", "s");
  bool switched = true;
  Parsed subscribed("*3\r\n" + Bulk("subscribe") + Bulk("+switch-master") + ":1\r\n");
  REQUIRE(reader.Handle(subscribed.root(), &switched).ok());
  CHECK(reader.subscribed());
  CHECK_FALSE(switched);

  Parsed other("*3\r\n" + Bulk("message") + Bulk("+switch-master") +
               Bulk("other 127.0.0.1 1 127.0.0.1 2"));
  REQUIRE(reader.Handle(other.root(), &switched).ok());
  CHECK_FALSE(switched);
  Parsed ours("*3\r\n" + Bulk("message") + Bulk("+switch-master") +
              Bulk("shop 127.0.0.1 1 127.0.0.1 2"));
  REQUIRE(reader.Handle(ours.root(), &switched).ok());
  CHECK(switched);

  Parsed pong("*2\r\n" + Bulk("pong") + Bulk(""));
  CHECK(reader.Handle(pong.root(), &switched).IsProtocolError());  // no PING was sent
  reader.PingSent();
  CHECK(reader.Handle(pong.root(), &switched).ok());
  CHECK(reader.pongs_due() == 0);
  Parsed stray("+OK\r\n");
  CHECK(reader.Handle(stray.root(), &switched).IsProtocolError());
}
