// The cachet CLI against a real memcached started on a free loopback port: the
// same commands as on the memory store, now across separate invocations, so
// binary-safe values through stdin and exact output bytes can be checked; and
// exit 3 when the server is gone.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_paths.h"
#include "run_command.h"
#include "launchers/memcached_server.h"

namespace cachet::test {
namespace {

class CliOnMemcached {
 public:
  CliOnMemcached() {
    REQUIRE(HaveMemcached());  // .ci/setup installs it
    auto server = StartMemcached();
    REQUIRE(server.ok());
    server_ = std::move(server).value();
    // Switching stores is editing `backend =` and naming the servers.
    config_ = WriteScratchFile("memcached.conf",
                               "[cache]\nbackend = memcached\n\n[memcached]\n"
                               "servers = " +
                                   server_->address() + "\n");
  }

  CommandOutcome Run(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), {kCachet, "-c", config_});
    return RunCommand(args, input);
  }

  ServerProcess& server() { return *server_; }

 private:
  std::unique_ptr<ServerProcess> server_;
  std::string config_;
};

std::string AllBytesTwice() {
  std::string bytes;
  for (int round = 0; round < 2; ++round) {
    for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  }
  return bytes;
}

}  // namespace

TEST_CASE_METHOD(CliOnMemcached, "a binary value goes in through stdin and out unchanged") {
  const std::string value = AllBytesTwice();
  CommandOutcome set = Run({"set", "bin", "-"}, value);
  REQUIRE(set.exit_code == 0);
  CHECK(set.out == "STORED\n");
  CommandOutcome get = Run({"get", "bin"});
  CHECK(get.exit_code == 0);
  CHECK(get.out == value);  // no newline added: stdout is not a terminal
  CHECK(Run({"set", "empty"}, "").exit_code == 0);
  CommandOutcome empty = Run({"get", "empty"});
  CHECK(empty.exit_code == 0);
  CHECK(empty.out.empty());
}

TEST_CASE_METHOD(CliOnMemcached, "writes, counters and exit codes across invocations") {
  CHECK(Run({"set", "k", "v", "--ttl", "100"}).exit_code == 0);
  CommandOutcome add = Run({"add", "k", "w"});
  CHECK(add.exit_code == 1);
  CHECK(add.out == "NOT_STORED\n");
  CHECK(Run({"append", "k", "!"}).out == "STORED\n");
  CHECK(Run({"get", "k"}).out == "v!");
  CHECK(Run({"touch", "k", "50"}).out == "TOUCHED\n");
  CommandOutcome mget = Run({"mget", "k", "nope"});
  CHECK(mget.exit_code == 1);
  CHECK(mget.out == "v!\n(nil)\n");
  CHECK(Run({"del", "k"}).out == "DELETED\n");
  CommandOutcome del = Run({"del", "k"});
  CHECK(del.exit_code == 1);
  CHECK(del.out == "NOT_FOUND\n");
  CHECK(Run({"incr", "n"}).exit_code == 1);
  CHECK(Run({"set", "n", "10"}).exit_code == 0);
  CHECK(Run({"incr", "n", "5"}).out == "15\n");
  CHECK(Run({"decr", "n", "20"}).out == "0\n");
  CommandOutcome stats = Run({"stats"});
  CHECK(stats.exit_code == 0);
  CHECK(stats.out.find("curr_items ") != std::string::npos);
  CHECK(Run({"flush"}).out == "OK\n");
  CHECK(Run({"get", "n"}).exit_code == 1);
}

TEST_CASE_METHOD(CliOnMemcached, "gets prints the CAS token that cas then needs") {
  REQUIRE(Run({"set", "c", "one"}).exit_code == 0);
  CommandOutcome gets = Run({"gets", "c"});
  REQUIRE(gets.exit_code == 0);
  const std::size_t space = gets.out.find(' ');
  REQUIRE(space != std::string::npos);
  CHECK(gets.out.substr(space + 1) == "one");
  const std::string token = gets.out.substr(0, space);
  CommandOutcome first = Run({"cas", "c", token, "two"});
  CHECK(first.exit_code == 0);
  CHECK(first.out == "STORED\n");
  CommandOutcome stale = Run({"cas", "c", token, "three"});
  CHECK(stale.exit_code == 1);
  CHECK(stale.out == "EXISTS\n");
  CHECK(Run({"get", "c"}).out == "two");
}

TEST_CASE_METHOD(CliOnMemcached, "a store that is down is exit 3, not a miss") {
  REQUIRE(server().Stop().ok());
  CommandOutcome r = Run({"get", "k"});
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  CHECK(r.err.find("cachet: ") != std::string::npos);
}

TEST_CASE_METHOD(CliOnMemcached, "stats prints what the live servers say and names the one down") {
  const RefusingPort refusing;
  const std::string down = "127.0.0.1:" + std::to_string(refusing.port());
  const std::string two = WriteScratchFile(
      "two.conf", "[cache]\nbackend = memcached\n\n[memcached]\nservers = " +
                      server().address() + "," + down + "\n");
  CommandOutcome r = RunCommand({kCachet, "-c", two, "stats"});
  CHECK(r.exit_code == 3);
  CHECK(r.out.find(server().address() + " curr_items ") != std::string::npos);
  CHECK(r.out.find(down) == std::string::npos);
  CHECK(r.err.find(down) != std::string::npos);
}

TEST_CASE_METHOD(CliOnMemcached, "the shell's metrics count a down server's calls as errors") {
  const std::string up = "cachet_server_up{server=\"" + server().address() + "\"} ";
  CommandOutcome live = Run({"shell"}, "set k v\nget k\nmetrics\n");
  REQUIRE(live.exit_code == 0);
  CHECK(live.out.find("cachet_operations_total{op=\"get\",result=\"hit\"} 1\n") !=
        std::string::npos);
  CHECK(live.out.find(up + "1\n") != std::string::npos);
  CHECK(live.out.find("cachet_server_requests_total{server=\"" + server().address() + "\"} 2\n") !=
        std::string::npos);

  REQUIRE(server().Stop().ok());
  // failure_limit is 2: the set and the first get fail at the server, which is
  // then marked dead, so the second get fails without trying it.
  CommandOutcome r = Run({"shell"}, "set k v\nget k\nget k\nmetrics\n");
  CHECK(r.out.find("cachet_operations_total{op=\"get\",result=\"hit\"} 0\n") != std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"get\",result=\"miss\"} 0\n") != std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"get\",result=\"error\"} 2\n") !=
        std::string::npos);
  CHECK(r.out.find("cachet_operation_errors_total{op=\"get\",code=\"unavailable\"} 2\n") !=
        std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"set\",result=\"error\"} 1\n") !=
        std::string::npos);
  CHECK(r.out.find(up + "0\n") != std::string::npos);
  CHECK(r.out.find("cachet_server_marked_dead_total{server=\"" + server().address() + "\"} 1\n") !=
        std::string::npos);
  CHECK(r.out.find("cachet_server_requests_total{server=\"" + server().address() + "\"} 2\n") !=
        std::string::npos);
  CHECK(r.out.find("cachet_server_errors_total{server=\"" + server().address() +
                   "\",kind=\"unavailable\"} 2\n") != std::string::npos);
}

}  // namespace cachet::test

namespace cachet::test {

TEST_CASE_METHOD(CliOnMemcached, "a shell batch on memcached, and one sent noreply") {
  CommandOutcome r = Run({"shell"}, "batch\nset a 1\nincr a 5\nget a\nend\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "STORED\n6\n6\n");
  CommandOutcome quiet = Run({"shell"}, "batch noreply\nset b 7\nincr b 3\ndel nope\nend\nget b\n");
  CHECK(quiet.exit_code == 0);
  // The text protocol's noreply says nothing back: each write is OK once sent.
  CHECK(quiet.out == "OK\nOK\nOK\n10\n");
}

}  // namespace cachet::test
