// The cachet CLI as a user runs it, on the embedded memory store: the shell,
// exit codes, config errors, `check` and `plugins`; and cachet-bench end to end.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_paths.h"
#include "run_command.h"

namespace cachet::test {
namespace {

using namespace std::string_literals;

CommandOutcome Cachet(std::vector<std::string> args, const std::string& input = {}) {
  args.insert(args.begin(), kCachet);
  return RunCommand(args, input);
}

std::string SecretConfig() {
  return WriteScratchFile("secret.conf",
                          "[cache]\nbackend = memory\nplugin_path = " CACHET_CLI_TEST_PLUGIN_DIR
                          "\n\n[secretstore]\npassword = hunter2-very-secret\nuser = alice\n");
}

}  // namespace

TEST_CASE("the shell runs the issue's example: v and 15") {
  CommandOutcome r = Cachet({"shell"}, "set k v\nget k\nset n 10\nincr n 5\nget n\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "STORED\nv\nSTORED\n15\n15\n");
  CHECK(r.err.empty());
}

TEST_CASE("the shell's metrics print a Prometheus exposition of the shell's calls") {
  CommandOutcome r = Cachet({"shell"}, "set k v\nget k\nget nope\nmetrics\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("STORED\nv\n(nil)\n# HELP cachet_info ", 0) == 0);
  CHECK(r.out.find("cachet_info{store=\"memory\"} 1\n") != std::string::npos);
  CHECK(r.out.find("# TYPE cachet_operations_total counter\n") != std::string::npos);
  CHECK(r.out.find("cachet_calls_total{op=\"get\"} 2\n") != std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"get\",result=\"hit\"} 1\n") != std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"get\",result=\"miss\"} 1\n") != std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"get\",result=\"error\"} 0\n") !=
        std::string::npos);
  CHECK(r.out.find("cachet_operations_total{op=\"set\",result=\"hit\"} 1\n") != std::string::npos);
  CHECK(r.out.find("# TYPE cachet_operation_duration_seconds histogram\n") != std::string::npos);
  CHECK(r.out.find("cachet_operation_duration_seconds_bucket{op=\"get\",le=\"+Inf\"} 2\n") !=
        std::string::npos);
  CHECK(r.out.find("cachet_operation_duration_seconds_count{op=\"get\"} 2\n") != std::string::npos);
  CHECK(r.out.find("cachet_operation_duration_quantile_seconds{op=\"get\",quantile=\"0.5\"} ") !=
        std::string::npos);
  CHECK(r.out.find("cachet_operation_duration_quantile_seconds{op=\"get\",quantile=\"0.99\"} ") !=
        std::string::npos);
  CHECK(r.out.find("cachet_server_up") == std::string::npos);  // the memory store has no servers

  CommandOutcome json = Cachet({"shell"}, "get nope\nmetrics json\n");
  CHECK(json.out.find("\"get\": {") != std::string::npos);
  CHECK(json.out.find("\"misses\": 1") != std::string::npos);
  CHECK(Cachet({"shell"}, "metrics yaml\n").out.find("ERROR usage: metrics: unknown format") == 0);
  // With counting off, no call families: their zeros would read as an idle Cache.
  CommandOutcome off = Cachet({"-o", "cache.metrics=false", "shell"}, "get k\nmetrics\n");
  CHECK(off.out.find("cachet_info{store=\"memory\"} 1\n") != std::string::npos);
  CHECK(off.out.find("cachet_calls_total") == std::string::npos);
  CHECK(off.out.find("cachet_operation_duration_seconds") == std::string::npos);
}

TEST_CASE("the shell prints one result per line and goes on after a bad line") {
  const std::string input =
      "frobnicate x\n"
      "get\n"
      "\n"
      "# a comment\n"
      "set a 1 --ttl 100\r\n"
      "get missing\n"
      "add a 2\n"
      "replace nope 3\n"
      "del a\n"
      "del a\n"
      "incr nope\n"
      "set q \"two words\"\n"
      "get q\n"
      "set r -\n"
      "decr q 1\n";
  CommandOutcome r = Cachet({"shell"}, input);
  CHECK(r.exit_code == 0);
  const std::string expected =
      "ERROR usage: unknown command \"frobnicate\" (try: help)\n"
      "ERROR usage: too few arguments; usage: get KEY\n"
      "STORED\n"
      "(nil)\n"
      "NOT_STORED\n"
      "NOT_STORED\n"
      "DELETED\n"
      "NOT_FOUND\n"
      "NOT_FOUND\n"
      "STORED\n"
      "two words\n";
  REQUIRE(r.out.substr(0, expected.size()) == expected);
  // A value from stdin is impossible in the shell, and "two words" is no number:
  // both are error lines, not the end of the shell.
  CHECK(r.out.find("ERROR invalid_argument", expected.size()) != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 13);
}

namespace {

// The lines of `text`, without their newlines.
std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

}  // namespace

TEST_CASE("an unknown command's error quotes a bounded, escaped part of it") {
  const std::string huge(1 << 20, 'x');
  CommandOutcome r = Cachet({"shell"}, huge + "\nfro\x1b[31mb\nset k v\n");
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = LinesOf(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].size() < 1024);
  CHECK(lines[0].starts_with("ERROR usage: unknown command \"" + std::string(200, 'x') + "\"..."));
  CHECK_THAT(lines[0], Catch::Contains("(1048576 bytes)"));
  // ESC reaches nobody's terminal: it is written as the shell would read it back.
  CHECK(lines[1] == "ERROR usage: unknown command \"fro\\x1b[31mb\" (try: help)");
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(lines[2] == "STORED");
}

TEST_CASE("a one-shot unknown command or option is quoted escaped and bounded") {
  CommandOutcome command = Cachet({"fro\x1b[31mb"});
  CHECK(command.exit_code == 2);
  CHECK_THAT(command.err, Catch::Contains("unknown command \"fro\\x1b[31mb\""));
  CHECK(command.err.find('\x1b') == std::string::npos);

  CommandOutcome option = Cachet({"set", "k", "v", "--bo\x1bgus" + std::string(100000, 'g')});
  CHECK(option.exit_code == 2);
  CHECK_THAT(option.err, Catch::Contains("--bo\\x1bgus"));
  CHECK(option.err.find('\x1b') == std::string::npos);
  CHECK(option.err.size() < 2048);
}

TEST_CASE("the shell refuses a line over its limit and goes on with the next") {
  // The limit is max_value_size plus a margin for the command and the key.
  const std::string fits = "set fits " + std::string(1 << 20, 'v');
  const std::string too_long = "set big " + std::string(3 << 20, 'v');
  CommandOutcome r = Cachet({"-o", "cache.max_value_size=1048576", "shell"},
                            too_long + "\nset k v\nget k\nget big\n" + fits + "\n" + too_long);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = LinesOf(r.out);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].starts_with("ERROR too_large: "));
  CHECK_THAT(lines[0], Catch::Contains(std::to_string(too_long.size())));
  CHECK(lines[0].size() < 1024);
  CHECK(lines[1] == "STORED");
  CHECK(lines[2] == "v");
  CHECK(lines[3] == "(nil)");
  CHECK(lines[4] == "STORED");
  CHECK(lines[5].starts_with("ERROR too_large: "));  // the last line, with no newline
}

TEST_CASE("the shell keeps binary values written with escapes") {
  CommandOutcome r = Cachet({"shell"}, "set b \"a\\x00b\\r\\nc\"\nget b\nappend b \"!\"\nget b\n");
  CHECK(r.exit_code == 0);
  // Printed back quoted, with the escapes it was written in, one line each.
  CHECK(r.out == "STORED\n\"a\\0b\\r\\nc\"\nSTORED\n\"a\\0b\\r\\nc!\"\n");
}

TEST_CASE("the shell answers gets and cas with the CAS token") {
  CommandOutcome r = Cachet({"shell"}, "set c x\ngets c\ncas c 0 y\nmget c nope\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("STORED\n"));
  CHECK(r.out.find(" x\n") != std::string::npos);  // "<cas> x"
  CHECK(r.out.find("EXISTS\nx\n(nil)\n") != std::string::npos);
}

TEST_CASE("exit codes: 1 on a miss, 2 on bad usage") {
  CommandOutcome miss = Cachet({"get", "nothing-here"});
  CHECK(miss.exit_code == 1);
  CHECK(miss.out.empty());

  CHECK(Cachet({"get"}).exit_code == 2);
  CHECK(Cachet({"frobnicate"}).exit_code == 2);
  CHECK(Cachet({"set", "k", "v", "--bogus"}).exit_code == 2);
  CHECK(Cachet({"incr", "k", "not-a-number"}).exit_code == 2);
  // Too large is not "negative": the message gives the range.
  CommandOutcome huge_ttl = Cachet({"touch", "k", "99999999999999999999"});
  CHECK(huge_ttl.exit_code == 2);
  CHECK(huge_ttl.err.find("SECONDS must be a whole number from 0 to 18446744073709551615") !=
        std::string::npos);
  CHECK(Cachet({}).exit_code == 2);
  CHECK(Cachet({"-c", "/nonexistent/cachet.conf", "get", "k"}).exit_code == 2);
}

TEST_CASE("a one-shot set reads its value from stdin and succeeds") {
  CommandOutcome r = Cachet({"set", "k"}, "bytes\0with NUL\r\n"s);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "STORED\n");
}

TEST_CASE("--help works globally and per command") {
  CommandOutcome global = Cachet({"--help"});
  CHECK(global.exit_code == 0);
  CHECK(global.out.find("shell") != std::string::npos);
  CommandOutcome set = Cachet({"set", "--help"});
  CHECK(set.exit_code == 0);
  CHECK(set.out.find("--ttl SECONDS") != std::string::npos);
}

TEST_CASE("a config with a typo'd key fails with exit 2 naming the key") {
  const std::string path =
      WriteScratchFile("typo.conf", "[cache]\nbackend = memory\nnamespcae = x:\n");
  for (std::vector<std::string> args : {std::vector<std::string>{"check"}, {"get", "k"}}) {
    args.insert(args.begin(), {"-c", path});
    CommandOutcome r = Cachet(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("namespcae") != std::string::npos);
    CHECK(r.err.find(":3:") != std::string::npos);  // the line
  }
}

// Not named "-o ...": the test binary would read a leading "-o" as its own option.
TEST_CASE("an -o override replaces a config value") {
  CommandOutcome r = Cachet({"-o", "cache.namespace=app:", "check"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("namespace = app:") != std::string::npos);
  CHECK(Cachet({"-o", "cache.compressor=lz4", "check"}).exit_code == 2);
}

TEST_CASE("check prints the effective settings with secrets masked") {
  CommandOutcome r = Cachet({"-c", SecretConfig(), "check"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("backend = memory") != std::string::npos);
  CHECK(r.out.find("max_bytes = ") != std::string::npos);  // a default filled in
  CHECK(r.out.find("user = alice") != std::string::npos);
  CHECK(r.out.find("password = ********") != std::string::npos);
  CHECK(r.out.find("hunter2") == std::string::npos);
  CHECK(r.err.find("hunter2") == std::string::npos);
}

TEST_CASE("plugins lists memory, and marks what the core emulates") {
  CommandOutcome r = Cachet({"-c", SecretConfig(), "plugins"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("memory ") != std::string::npos);
  CHECK(r.out.find("max_bytes (int, default ") != std::string::npos);
  const std::size_t secret = r.out.find("secretstore 0.0.1: test plugin with a secret option");
  REQUIRE(secret != std::string::npos);
  const std::string entry = r.out.substr(secret, r.out.find("\n\n", secret) - secret);
  CHECK(entry.find("(emulated by cachet)") != std::string::npos);
  CHECK(entry.find("password (string, default , secret)") != std::string::npos);
}

TEST_CASE("cachet-bench runs the seed scenarios and prints cmpthese tables") {
  CommandOutcome r = RunCommand({kCachetBench, "-c", kDefaultConfig, "-c", kDefaultConfig, "--ops",
                                 "300", "--scenarios", "get,set_delete,get_multi"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("==== get: ") != std::string::npos);
  CHECK(r.out.find("==== get_multi: ") != std::string::npos);
  CHECK(r.out.find("==== incr: ") == std::string::npos);
  // Two configs with the same stem: labelled apart by backend, then by number.
  CHECK(r.out.find("default:memory ") != std::string::npos);
  CHECK(r.out.find("default:memory#2 ") != std::string::npos);
  CHECK(r.out.find("/s ") != std::string::npos);
  CHECK(r.out.find("--") != std::string::npos);
}

TEST_CASE("cachet-bench --threads 1,2 runs each thread count as its own columns") {
  CommandOutcome r =
      RunCommand({kCachetBench, "-c", kDefaultConfig, "--ops", "300", "--repeat", "1",
                  "--scenarios", "set", "--threads", "1,2", "--format", "csv"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\nset,default,1,") != std::string::npos);
  CHECK(r.out.find("\nset,default x2,1,") != std::string::npos);

  CommandOutcome bad = RunCommand({kCachetBench, "-c", kDefaultConfig, "--threads", "1,x"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--threads takes numbers separated by commas"));
  CommandOutcome twice = RunCommand({kCachetBench, "-c", kDefaultConfig, "--threads", "2,2"});
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.err, Catch::Contains("--threads names 2 twice"));
}

TEST_CASE("cachet-bench --cache-per-thread gives each thread a Cache of its own") {
  // A budget that holds one thread's 100 values of 1000 bytes but not two
  // threads' sets: with one shared Cache the second thread's set-up evicts the
  // first's keys and the get scenario misses; with a Cache each, none misses.
  const std::vector<std::string> run = {kCachetBench, "-c", kDefaultConfig, "-o",
                                        "memory.max_bytes=163840", "--value-size", "1000",
                                        "--keys", "100", "--threads", "2", "--scenarios", "get",
                                        "--ops", "2000", "--repeat", "1", "--no-peers",
                                        "--format", "json"};
  CommandOutcome shared = RunCommand(run);
  CHECK(shared.exit_code == 3);
  CHECK_THAT(shared.out, Catch::Contains("unexpected miss"));
  CHECK_THAT(shared.out, Catch::Contains("\"cache_per_thread\": false"));

  std::vector<std::string> apart = run;
  apart.push_back("--cache-per-thread");
  CommandOutcome own = RunCommand(apart);
  CHECK(own.exit_code == 0);
  CHECK_THAT(own.out, !Catch::Contains("unexpected miss"));
  CHECK_THAT(own.out, Catch::Contains("\"cache_per_thread\": true"));
}

TEST_CASE("cachet-bench --scaling times private work on one thread and on two without a config") {
  CommandOutcome r = RunCommand({kCachetBench, "--scaling", "--duration", "0.05", "--repeat", "1"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("on 2 threads over 1 thread"));
  // Each kind's line: its name, what it does, then a median and a range, all
  // ratios above 0 (what they are depends on the machine and its load).
  for (const char* kind : {"loads", "multiply", "digits"}) {
    const std::size_t at = r.out.find(std::string("\n") + kind + " ");
    REQUIRE(at != std::string::npos);
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    const std::size_t x = line.find("x ");
    REQUIRE(x != std::string::npos);
    const std::size_t start = line.find_last_of(' ', x) + 1;
    CHECK(std::stod(line.substr(start, x - start)) > 0);
  }
  // Refused with exit 2: what the study would ignore, two studies at once, and a
  // study given --cache-per-thread.
  const std::vector<std::vector<std::string>> refused = {
      {"--scaling", "--duration", "0.001"},
      {"--scaling", "--threads", "1,2"},
      {"--scaling", "-c", kDefaultConfig},
      {"--scaling", "--format", "json"},
      {"--scaling", "--stampede"},
      {"--near", "--scaling"},
      {"--near", "-c", kDefaultConfig, "--cache-per-thread"},
  };
  for (const std::vector<std::string>& args : refused) {
    std::vector<std::string> argv = {kCachetBench};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandOutcome bad = RunCommand(argv);
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.empty());
  }
}

TEST_CASE("cachet-bench rejects an unknown scenario with exit 2") {
  CommandOutcome r = RunCommand({kCachetBench, "-c", kDefaultConfig, "--scenarios", "get,nope"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("nope") != std::string::npos);
}

namespace {

// `check` and opening (`get`) on the same config: both must refuse it with
// exit 2 and the same first line of error.
void RequireRefusedAlike(const std::vector<std::string>& config_args, const std::string& expected) {
  std::vector<std::string> check = config_args;
  check.push_back("check");
  std::vector<std::string> get = config_args;
  get.insert(get.end(), {"get", "k"});
  const CommandOutcome checked = Cachet(check);
  const CommandOutcome opened = Cachet(get);
  INFO(checked.err);
  CHECK(checked.exit_code == 2);
  CHECK(opened.exit_code == 2);
  CHECK_THAT(checked.err, Catch::Contains(expected));
  CHECK(checked.err == opened.err);
}

}  // namespace

TEST_CASE("shell: a fetch whose command fails answers with an error line") {
  CommandOutcome r = Cachet({"shell"}, "fetch k -- ls /nonexistent-folder\n"
                                       "fetch k -- false\nget k\n");
  INFO(r.err);
  CHECK(r.out == "ERROR the command exited with status 2: nothing was cached\n"
                 "ERROR the command exited with status 1: nothing was cached\n(nil)\n");
}

TEST_CASE("check refuses the memory store's shards = 0, as opening does") {
  RequireRefusedAlike({"-o", "memory.shards=0"},
                      "-o: [memory] shards = 0: must be between 1 and 1024");
  const std::string path = WriteScratchFile("budget.conf",
                                            "[cache]\nbackend = memory\n[memory]\nshards = 8\n"
                                            "max_bytes = 4\n");
  RequireRefusedAlike({"-c", path}, path + ":5: [memory] max_bytes = 4: must be between 5120 and ");
}

// Its certificate could be checked against no name: a config error, not every
// call failing as if the server were down.
TEST_CASE("check refuses a unix: server over verified TLS without tls_server_name") {
  for (const std::string store : {"memcached", "redis", "tokyotyrant"}) {
    INFO(store);
    RequireRefusedAlike({"-o", "cache.backend=" + store, "-o", store + ".servers=unix:/tmp/s.sock",
                         "-o", store + ".tls=true"},
                        "-o: [" + store + "] servers = unix:/tmp/s.sock: unix:/tmp/s.sock: a "
                        "unix: server over TLS needs tls_server_name");
  }
  for (const char* fix :
       {"memcached.tls_server_name=cache.internal", "memcached.tls_verify=false"}) {
    const CommandOutcome checked =
        Cachet({"-o", "cache.backend=memcached", "-o", "memcached.servers=unix:/tmp/s.sock", "-o",
                "memcached.tls=true", "-o", fix, "check"});
    INFO(fix << ": " << checked.err);
    CHECK(checked.exit_code == 0);
  }
}

// The test runs in the build tree; the file lives in its tests/ folder.
TEST_CASE("relative TLS files and plugin folders in a config file are taken from its folder") {
  const std::string path =
      WriteScratchFile("relative.conf",
                       "[cache]\nbackend = memcached\nplugin_path = no-such-plugins\n"
                       "[memcached]\nservers = 127.0.0.1:11211\ntls = true\n"
                       "tls_ca_file = no-such-ca.crt\n");
  const std::string folder = std::string(CACHET_BINARY_DIR) + "/tests/";
  const CommandOutcome checked = Cachet({"-c", path, "check"});
  INFO(checked.err);
  CHECK(checked.exit_code == 2);
  CHECK_THAT(checked.err, Catch::Contains("[memcached] tls_ca_file = no-such-ca.crt: No such "
                                          "file or directory (" + folder + "no-such-ca.crt)"));
  CHECK_THAT(checked.err, Catch::Contains("no folder '" + folder + "no-such-plugins'"));
}

TEST_CASE("check refuses a memcached port 99999 with the file, line and key") {
  const std::string path = WriteScratchFile(
      "port.conf", "[cache]\nbackend = memcached\n\n[memcached]\nservers = 127.0.0.1:99999\n");
  RequireRefusedAlike({"-c", path}, path + ":5: [memcached] servers = 127.0.0.1:99999: ");
  const std::string text = WriteScratchFile(
      "binkeys.conf", "[cache]\nbackend = memcached\n[memcached]\nbinary_keys = true\n");
  RequireRefusedAlike({"-c", text},
                      text + ":4: [memcached] binary_keys = true: needs protocol = meta");
}

TEST_CASE("check refuses the perl flags profile with zstd, naming the file, line and key") {
  const std::string path = WriteScratchFile(
      "perl.conf", "[cache]\nbackend = memory\ncompressor = zstd\nflags_profile = perl\n");
  RequireRefusedAlike({"-c", path}, path + ":3: [cache] compressor = zstd: ");
  const CommandOutcome r = Cachet({"-c", path, "check"});
  CHECK_THAT(r.err, Catch::Contains("perl"));
  CHECK_THAT(r.err, Catch::Contains("flags_profile = perl is set on line 4"));
}

TEST_CASE("check runs the range checks of the redis and tokyotyrant plugins") {
  const std::string redis = WriteScratchFile(
      "cluster.conf", "[cache]\nbackend = redis\n[redis]\nmode = cluster\ndb = 3\n");
  RequireRefusedAlike({"-c", redis}, redis + ":5: [redis] db = 3: ");
  RequireRefusedAlike({"-o", "cache.backend=redis", "-o", "redis.cluster_max_redirects=0"},
                      "-o: [redis] cluster_max_redirects = 0: must be between 1 and 1000");
  RequireRefusedAlike({"-o", "cache.backend=tokyotyrant", "-o", "tokyotyrant.mget_max_keys=0"},
                      "-o: [tokyotyrant] mget_max_keys = 0: must be between 1 and ");
  // An option left at its default was set nowhere: no place, no value is named.
  RequireRefusedAlike({"-o", "cache.backend=redis", "-o", "redis.mode=sentinel"},
                      "cachet: config_error: [redis] sentinel_master: is required with mode");
}

TEST_CASE("a section of another store is checked by its plugin too") {
  RequireRefusedAlike({"-o", "memcached.ketama_points=0"},
                      "-o: [memcached] ketama_points = 0: must be between 1 and 100000");
}

TEST_CASE("did you mean: commands, stores, options") {
  const CommandOutcome command = Cachet({"gett", "k"});
  CHECK(command.exit_code == 2);
  CHECK_THAT(command.err, Catch::Contains("unknown command \"gett\" (did you mean 'get'?)"));
  const CommandOutcome in_shell = Cachet({"shell"}, "sett k v\n");
  CHECK(in_shell.out == "ERROR usage: unknown command \"sett\" (did you mean 'set'?)\n");

  const CommandOutcome store = Cachet({"-o", "cache.backend=memcache", "check"});
  CHECK(store.exit_code == 2);
  CHECK_THAT(store.err, Catch::Contains("-o: [cache] backend = memcache: plugin "));
  CHECK_THAT(store.err, Catch::Contains("(did you mean 'memcached'?)"));
  const std::string typo = WriteScratchFile("typo.conf", "[cache]\nbackend = memcache\n");
  CHECK_THAT(Cachet({"-c", typo, "check"}).err,
             Catch::Contains(typo + ":2: [cache] backend = memcache: plugin "));
  const CommandOutcome section = Cachet({"-o", "memcahced.servers=h", "check"});
  CHECK(section.exit_code == 2);
  CHECK_THAT(section.err, Catch::Contains("-o: [memcahced]: no plugin named 'memcahced' "
                                          "(did you mean 'memcached'?)"));

  const CommandOutcome option = Cachet({"-o", "memcached.io_timout_ms=5", "check"});
  CHECK(option.exit_code == 2);
  CHECK_THAT(option.err, Catch::Contains("[memcached] io_timout_ms: unknown option (did you mean "
                                         "'io_timeout_ms'?)"));
  // Nothing close: no guess.
  CHECK_THAT(Cachet({"xyzzy"}).err, !Catch::Contains("did you mean"));
}

TEST_CASE("the shell quotes a value that is not one plain line, and a stored (nil)") {
  CommandOutcome r = Cachet({"shell"},
                            "set a \"a\\nb\"\nget a\nset n \"(nil)\"\nget n\nget missing\n"
                            "set q \"\\\"x\\\"\"\nget q\nset e \"\"\nget e\nset t \"tab\\there\"\n"
                            "mget a n missing t\nget a\n");
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = LinesOf(r.out);
  REQUIRE(lines.size() == 15);
  CHECK(lines[1] == "\"a\\nb\"");
  CHECK(lines[3] == "\"(nil)\"");
  CHECK(lines[4] == "(nil)");
  CHECK(lines[6] == "\"\\\"x\\\"\"");
  CHECK(lines[8] == "\"\"");
  CHECK(lines[10] == "\"a\\nb\"");
  CHECK(lines[11] == "\"(nil)\"");
  CHECK(lines[12] == "(nil)");
  CHECK(lines[13] == "\"tab\\there\"");
  // What the shell prints, it reads back: the quoted word is the stored value.
  CHECK(lines[14] == lines[1]);
}

TEST_CASE("the shell quotes a value that would read as an error line or lose a space") {
  CommandOutcome r = Cachet({"shell"},
                            "set e \"ERROR timeout: fake\"\nget e\nmget e\n"
                            "set s \" x\"\nget s\nset t \"x \"\nget t\nset ok ERRORS\nget ok\n");
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = LinesOf(r.out);
  REQUIRE(lines.size() == 9);
  CHECK(lines[1] == "\"ERROR timeout: fake\"");
  CHECK(lines[2] == "\"ERROR timeout: fake\"");
  CHECK(lines[4] == "\" x\"");
  CHECK(lines[6] == "\"x \"");
  CHECK(lines[8] == "ERRORS");
}

TEST_CASE("cachet-bench suggests a scenario for a typo") {
  CommandOutcome r = RunCommand({kCachetBench, "-c", kDefaultConfig, "--scenarios", "gett"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown scenario 'gett' (did you mean 'get'?)"));
}

TEST_CASE("cachet-bench: a skipped cell is not a failure, an unreachable column is") {
  // The memory store offers no noreply: a skipped cell, exit 0.
  CommandOutcome skipped =
      RunCommand({kCachetBench, "-c", kDefaultConfig, "--ops", "50", "--repeat", "1", "--scenarios",
                  "get,noreply", "--format", "json"});
  CHECK(skipped.exit_code == 0);
  CHECK_THAT(skipped.out, Catch::Contains("\"skipped\": true"));
  CHECK_THAT(skipped.out, Catch::Contains("\"failed\": false"));

  // Nothing listens on port 1: every operation of that column fails.
  const std::string down =
      WriteScratchFile("down.conf",
                       "[cache]\nbackend = memcached\n[memcached]\nservers = 127.0.0.1:1\n"
                       "connect_timeout_ms = 100\n");
  CommandOutcome failed =
      RunCommand({kCachetBench, "-c", kDefaultConfig, "-c", down, "--no-peers", "--ops", "20",
                  "--repeat", "1", "--scenarios", "get", "--format", "json"});
  CHECK(failed.exit_code == 3);
  CHECK_THAT(failed.out, Catch::Contains("\"failed\": true"));

  // A store that cannot be opened.
  CommandOutcome unopened = RunCommand({kCachetBench, "-c", kDefaultConfig, "-o", "memory.shards=0",
                                        "--ops", "20", "--scenarios", "get"});
  CHECK(unopened.exit_code == 2);
  CHECK_THAT(unopened.err, Catch::Contains("[memory] shards = 0"));
}

TEST_CASE("cachet-bench json carries the run's settings, versions and machine") {
  CommandOutcome r = RunCommand({kCachetBench, "-c", kDefaultConfig, "--ops", "50", "--repeat", "1",
                                 "--scenarios", "get", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("{"));
  for (const char* field : {"\"settings\"", "\"versions\"", "\"machine\"", "\"cores\"",
                            "\"load_average\"", "\"cachet\"", "\"rows\"", "\"repeat\": 1"}) {
    CHECK_THAT(r.out, Catch::Contains(field));
  }
}

}  // namespace cachet::test

namespace cachet::test {

TEST_CASE("the shell runs a batch: STORED, 6, 6") {
  CommandOutcome r = Cachet({"shell"}, "batch\nset a 1\nincr a 5\nget a\nend\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "STORED\n6\n6\n");
  CHECK(r.err.empty());
}

TEST_CASE("a shell batch refuses a value from stdin, as the shell does outside one") {
  CommandOutcome r = Cachet({"shell"}, "batch\nset k -\nget k\nend\nget k\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "ERROR usage: inside a batch the value must be given inline\n"
        "(nil)\n"
        "(nil)\n");
}

TEST_CASE("a shell batch prints one line per command, errors in their place") {
  const std::string input =
      "set old x\n"
      "batch\n"
      "get old\n"
      "get missing\n"
      "mget old\n"  // not a single-key command
      "add old y\n"
      "set v\n"  // no inline value
      "gets old\n"
      "del old\n"
      "del old\n"
      "touch nope 10\n"
      "incr old\n"  // deleted just before
      "append missing z\n"
      "frob\n"
      "set q \"unterminated\n"
      "end\n"
      "get old\n"
      "end\n";  // no batch open
  CommandOutcome r = Cachet({"shell"}, input);
  CHECK(r.exit_code == 0);
  const std::string expected_start =
      "STORED\n"
      "x\n"
      "(nil)\n"
      "ERROR usage: \"mget\" cannot be part of a batch\n"
      "NOT_STORED\n"
      "ERROR usage: inside a batch the value must be given inline\n";
  REQUIRE(r.out.size() > expected_start.size());
  CHECK(r.out.substr(0, expected_start.size()) == expected_start);
  const std::string rest = r.out.substr(expected_start.size());
  // gets prints "CAS VALUE"; the token differs from run to run.
  const std::size_t line_end = rest.find('\n');
  REQUIRE(line_end != std::string::npos);
  CHECK(rest.substr(0, line_end).ends_with(" x"));
  const std::string expected_end =
      "DELETED\n"
      "NOT_FOUND\n"
      "NOT_FOUND\n"
      "NOT_FOUND\n"
      "NOT_STORED\n"
      "ERROR usage: \"frob\" cannot be part of a batch\n"
      "ERROR usage: unterminated quote\n"
      "(nil)\n"
      "ERROR usage: end without batch\n";
  CHECK(rest.substr(line_end + 1) == expected_end);
}

TEST_CASE("a line over the limit inside a shell batch answers in its place") {
  const std::string too_long = "set big " + std::string(3 << 20, 'v');
  CommandOutcome r = Cachet({"-o", "cache.max_value_size=1048576", "shell"},
                            "batch\nset k v\n" + too_long + "\nget k\nend\n");
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = LinesOf(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "STORED");
  CHECK(lines[1].starts_with("ERROR too_large: "));
  CHECK(lines[2] == "v");
}

TEST_CASE("a shell batch left open at the end of input is not run") {
  CommandOutcome r = Cachet({"shell"}, "batch\nset a 1\nbatch\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "ERROR usage: a batch is already open (end it first)\n"
        "ERROR usage: the input ended inside a batch; its 1 commands were not run\n");
  CommandOutcome noreply = Cachet({"shell"}, "batch noreply\nset a 1\nget a\nend\n");
  CHECK(noreply.out.starts_with("ERROR unsupported: memory has no noreply"));
  CHECK(noreply.out.ends_with("(nil)\n"));
}

}  // namespace cachet::test
