// `cachet fetch` (GetOrCompute for scripts) run as separate processes against
// real stores: sixteen processes asking for one missing key run the command once
// on each store; a winner killed mid-run frees the key after its lease; during
// stale-while-revalidate the others get the old value instead of waiting; a
// failing command is passed on and nothing is cached. memcached's meta protocol
// and Redis use their own leases, the others an add-based lease key
// (docs/get-or-compute.md).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_paths.h"
#include "run_command.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_cluster.h"
#include "launchers/redis_server.h"
#include "launchers/tokyotyrant_server.h"

extern char** environ;

namespace cachet::test {
namespace {

using std::chrono::milliseconds;

// The servers of one store and a config file naming them.
struct StoreUnderTest {
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<RedisCluster> cluster;
  std::string config;
};

StoreUnderTest StartStore(const std::string& kind) {
  StoreUnderTest store;
  std::string section;
  if (kind == "memcached-text" || kind == "memcached-meta") {
    REQUIRE(HaveMemcached());
    auto server = StartMemcached();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    section = "backend = memcached\n\n[memcached]\nservers = " + store.server->address() +
              "\nprotocol = " + (kind == "memcached-meta" ? "meta" : "text") + "\n";
  } else if (kind == "redis") {
    auto server = StartRedis();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    section = "backend = redis\n\n[redis]\nservers = " + store.server->address() + "\n";
  } else if (kind == "redis-cluster") {
    auto cluster = RedisCluster::Start();
    REQUIRE(cluster.ok());
    store.cluster = std::move(cluster).value();
    section =
        "backend = redis\n\n[redis]\nmode = cluster\nservers = " + store.cluster->seeds() + "\n";
  } else {
    REQUIRE(kind == "tokyotyrant");
    auto server = StartTokyoTyrant();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    section = "backend = tokyotyrant\n\n[tokyotyrant]\nservers = " + store.server->address() + "\n";
  }
  store.config = WriteScratchFile(kind + ".conf", "[cache]\n" + section);
  return store;
}

std::vector<std::string> Fetch(const StoreUnderTest& store, std::vector<std::string> args) {
  args.insert(args.begin(), {kCachet, "-c", store.config, "fetch"});
  return args;
}

int LinesIn(const std::string& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// A command that records each run as a line in `log`, takes `seconds`, and
// prints `value`.
std::vector<std::string> SlowCommand(const std::string& log, const std::string& seconds,
                                     const std::string& value) {
  return {"sh", "-c", "echo run >> '" + log + "'; sleep " + seconds + "; printf '%s' " + value};
}

std::vector<std::string> Join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Waits (at most `limit`) until `path` has at least `lines` lines.
bool WaitForLines(const std::string& path, int lines, milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (LinesIn(path) < lines) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// A process started in a process group of its own, so the test can kill it and
// the command it runs, by that group's id, as a crash would.
class GroupProcess {
 public:
  explicit GroupProcess(const std::vector<std::string>& argv) {
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawnp(&pid_, args[0], nullptr, &attributes, args.data(), environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attributes);
  }
  ~GroupProcess() { KillGroup(); }
  GroupProcess(const GroupProcess&) = delete;
  GroupProcess& operator=(const GroupProcess&) = delete;

  bool started() const { return pid_ > 0; }
  void KillGroup() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("sixteen fetch processes on one missing key run the command once",
          "[fetch][processes][cluster]") {
  const std::string kind =
      GENERATE("memcached-text", "memcached-meta", "redis", "redis-cluster", "tokyotyrant");
  INFO("store: " << kind);
  StoreUnderTest store = StartStore(kind);
  const std::string log = WriteScratchFile(kind + "-runs.log", "");
  const std::vector<std::string> argv =
      Fetch(store, Join({"report", "--ttl", "60", "--"}, SlowCommand(log, "0.5", "value")));

  constexpr int kProcesses = 16;
  std::vector<CommandOutcome> outcomes(kProcesses);
  std::vector<std::thread> starters;
  for (int i = 0; i < kProcesses; ++i) {
    starters.emplace_back([&, i] { outcomes[i] = RunCommand(argv); });
  }
  for (std::thread& starter : starters) starter.join();

  CHECK(LinesIn(log) == 1);
  for (const CommandOutcome& outcome : outcomes) {
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.out == "value");
    CHECK(outcome.err.empty());
  }
  // Cached: one more fetch prints it without running the command.
  CHECK(RunCommand(argv).out == "value");
  CHECK(LinesIn(log) == 1);
}

TEST_CASE("a fetch killed mid-run frees the key when its lease lapses", "[fetch][processes]") {
  const std::string kind = GENERATE("memcached-text", "memcached-meta", "redis", "tokyotyrant");
  INFO("store: " << kind);
  StoreUnderTest store = StartStore(kind);
  const std::string log = WriteScratchFile(kind + "-killed.log", "");

  GroupProcess winner(
      Fetch(store, Join({"k", "--lease", "1", "--"}, SlowCommand(log, "30", "never"))));
  REQUIRE(winner.started());
  REQUIRE(WaitForLines(log, 1, milliseconds(10000)));  // its command runs: it holds the lease
  winner.KillGroup();

  // The dead winner's lease is still there: a lease key on the stores with the
  // add-based lease, the lock key of the lease script on Redis; memcached meta
  // keeps it in the server's placeholder for the key, and makes no key for it.
  const std::string lease_key = kind == "redis" ? "{k}#lease" : "k#lease";
  const std::vector<std::string> get_lease = {kCachet, "-c", store.config, "get", lease_key};
  CHECK(RunCommand(get_lease).exit_code == (kind == "memcached-meta" ? 1 : 0));
  // Waits for the lease to lapse (stores with second resolution round 1 s up to
  // at most 2 s), then wins it; a long lease_wait keeps it from loading on its own.
  CommandOutcome next =
      RunCommand(Join({kCachet, "-c", store.config, "-o", "cache.lease_wait_ms=20000", "fetch", "k",
                       "--lease", "1", "--"},
                      SlowCommand(log, "0", "fresh")));
  CHECK(next.exit_code == 0);
  CHECK(next.out == "fresh");
  CHECK(LinesIn(log) == 2);
  CHECK(RunCommand(get_lease).exit_code == 1);  // the new winner gave its lease back
}

TEST_CASE("during stale-while-revalidate other processes get the old value", "[fetch][processes]") {
  const std::string kind = GENERATE("memcached-text", "memcached-meta", "redis", "tokyotyrant");
  INFO("store: " << kind);
  StoreUnderTest store = StartStore(kind);
  const std::string log = WriteScratchFile(kind + "-stale.log", "");
  const std::vector<std::string> options = {"k", "--ttl", "1", "--stale", "60", "--"};

  CHECK(RunCommand(Fetch(store, Join(options, SlowCommand(log, "0", "old")))).out == "old");
  std::this_thread::sleep_for(milliseconds(1200));  // past its TTL, inside the stale window

  std::string refreshed;
  std::thread refresher([&] {
    // 4 s: the reader's process starts and reads well within it on a loaded machine.
    refreshed = RunCommand(Fetch(store, Join(options, SlowCommand(log, "4", "new")))).out;
  });
  const bool refreshing = WaitForLines(log, 2, milliseconds(10000));
  // Had it waited for the refresh it would print "new"; had it run its own
  // command the log would have a third line.
  CommandOutcome reader = RunCommand(Fetch(store, Join(options, SlowCommand(log, "0", "mine"))));
  refresher.join();
  REQUIRE(refreshing);
  CHECK(reader.out == "old");
  CHECK(refreshed == "new");
  CHECK(LinesIn(log) == 2);
  CHECK(RunCommand(Fetch(store, Join(options, SlowCommand(log, "0", "later")))).out == "new");
}

TEST_CASE("a failing command is passed on and nothing is cached", "[fetch][processes]") {
  StoreUnderTest store = StartStore("memcached-text");
  CommandOutcome failed =
      RunCommand(Fetch(store, {"k", "--", "sh", "-c", "printf partial; exit 7"}));
  CHECK(failed.exit_code == 7);
  CHECK(failed.out == "partial");
  CHECK(RunCommand({kCachet, "-c", store.config, "get", "k"}).exit_code == 1);

  CommandOutcome missing = RunCommand(Fetch(store, {"k", "--", "/nonexistent/command"}));
  CHECK(missing.exit_code == 127);
  // Worded by the client from the errno the child sent back (the child itself
  // only execs and writes that number).
  CHECK(missing.err ==
        "cachet fetch: cannot run /nonexistent/command: No such file or directory\n");
  CHECK(missing.out.empty());
  CHECK(RunCommand({kCachet, "-c", store.config, "get", "k"}).exit_code == 1);
  CommandOutcome not_executable = RunCommand(Fetch(store, {"k", "--", "/dev/null"}));
  CHECK(not_executable.exit_code == 127);
  CHECK(not_executable.err == "cachet fetch: cannot run /dev/null: Permission denied\n");

  // Arguments reach the command as given: no shell splits or expands them.
  CommandOutcome exact = RunCommand(Fetch(store, {"e", "--", "printf", "%s|", "a b", "$HOME"}));
  CHECK(exact.out == "a b|$HOME|");
  CHECK(RunCommand({kCachet, "-c", store.config, "get", "e"}).out == "a b|$HOME|");

  // A key the store refuses is a usage error; the command does not run.
  CommandOutcome bad_key = RunCommand(Fetch(store, {"bad key", "--", "echo", "ran"}));
  CHECK(bad_key.exit_code == 2);
  CHECK(bad_key.out.empty());

  // Inside the shell the command reads /dev/null, never the shell's next lines.
  CommandOutcome shell = RunCommand({kCachet, "-c", store.config, "shell"},
                                    "fetch s -- sh -c \"printf x; cat\"\nget s\n");
  CHECK(shell.exit_code == 0);
  CHECK(shell.out == "x\nx\n");
}

TEST_CASE("a command's output over max_value_size is an error, and nothing is cached",
          "[fetch]") {
  StoreUnderTest store = StartStore("memcached-text");
  const std::vector<std::string> limited = {kCachet, "-c", store.config, "-o",
                                            "cache.max_value_size=100000", "fetch"};
  // An output that never ends (far past a pipe's buffer): the command is
  // stopped and reaped, the client does not hang.
  CommandOutcome endless = RunCommand(Join(limited, {"k", "--", "yes"}));
  CHECK(endless.exit_code == 3);
  CHECK(endless.out.empty());
  CHECK(endless.err.find("more than 100000 bytes (max_value_size): nothing was cached") !=
        std::string::npos);
  CHECK(RunCommand({kCachet, "-c", store.config, "get", "k"}).exit_code == 1);

  // One byte over the limit, the command ending by itself.
  CommandOutcome over = RunCommand(Join(limited, {"k", "--", "head", "-c", "100001", "/dev/zero"}));
  CHECK(over.exit_code == 3);
  CHECK(over.out.empty());
  CHECK(RunCommand({kCachet, "-c", store.config, "get", "k"}).exit_code == 1);

  // Exactly the limit is cached.
  CommandOutcome at = RunCommand(Join(limited, {"k", "--", "head", "-c", "100000", "/dev/zero"}));
  CHECK(at.exit_code == 0);
  CHECK(at.out == std::string(100000, '\0'));
  CHECK(RunCommand({kCachet, "-c", store.config, "get", "k"}).out.size() == 100000);
}

}  // namespace cachet::test
