// The single-operation path of the text and meta protocols against a scripted
// fake memcached: replies split at every byte, garbage, error lines, replies
// that do not fit the command, a server that hangs up mid-reply and a stalled
// server, each judged by the status the call returns and by whether the
// connection was kept or dropped.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "launchers/server_process.h"
#include "memcached_backend.h"

namespace cachet::memcached::test {
namespace {

// One reply of the script: sent in two writes split at `cut` (a short pause
// between them, so the client likely reads the first part alone), or, for a
// stall, not at all: the server then waits for the client to hang up. With
// `hangup`, only the part before `cut` is sent, then the connection is closed.
struct Step {
  std::string reply;
  std::size_t cut = 0;
  bool stall = false;
  bool hangup = false;
};

// A fake memcached on a loopback port that answers each request it receives
// with the script's next step, whatever the request; a store's data line is
// read with its command line, and a meta batch's closing mn is answered MN
// without a step. A connection the client closes is followed by the next one
// it makes. Every wait is bounded by a poll timeout.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<Step> script) : script_(std::move(script)) {
    listener_ = cachet::test::ListenOnLoopback(4, &port_);
    REQUIRE(listener_ >= 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }
  // How many connections were accepted, once the script has been played.
  int connections() const { return connections_.load(); }
  // How many meta mn commands (the batch path's) came, once it has been played.
  int noops() const { return noops_.load(); }

 private:
  static bool Readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 3000) == 1;
  }

  // Takes one line off the front of `*pending`, reading more as needed: false
  // when the client hung up (or nothing came for 3 s).
  static bool NextLine(int fd, std::string* pending, std::string* line) {
    for (int reads = 0; reads < 1000; ++reads) {
      const std::size_t end = pending->find("\r\n");
      if (end != std::string::npos) {
        *line = pending->substr(0, end);
        pending->erase(0, end + 2);
        return true;
      }
      char chunk[4096];
      const ssize_t n = Readable(fd) ? ::read(fd, chunk, sizeof chunk) : 0;
      if (n <= 0) return false;
      pending->append(chunk, static_cast<std::size_t>(n));
    }
    return false;
  }

  static void Send(int fd, std::string_view bytes) {
    // A client that went away is no concern of this fake.
    [[maybe_unused]] ssize_t written = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }

  // Plays steps on one connection until the script ends or the client hangs up.
  void ServeConnection(int fd, std::size_t* next) {
    std::string pending;
    std::string line;
    // A quiet meta command (the batch path's) is followed by an mn, which is
    // read and answered even after the script's last step.
    bool quiet = false;
    while ((*next < script_.size() || quiet) && NextLine(fd, &pending, &line)) {
      if (line == "mn") {
        ++noops_;
        Send(fd, "MN\r\n");
        quiet = false;
        continue;
      }
      if (*next == script_.size()) return;
      quiet = line.ends_with(" q");
      if ((line.starts_with("set ") || line.starts_with("ms ")) && !NextLine(fd, &pending, &line)) {
        return;
      }
      const Step& step = script_[(*next)++];
      if (step.stall) {
        // The client gives up after its I/O timeout and closes the connection.
        while (NextLine(fd, &pending, &line)) {
        }
        return;
      }
      const std::string_view reply = step.reply;
      Send(fd, reply.substr(0, step.cut));
      if (step.hangup) return;
      if (step.cut < reply.size()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        Send(fd, reply.substr(step.cut));
      }
    }
  }

  void Serve() {
    std::size_t next = 0;
    for (int accepted = 0; accepted < 100 && next < script_.size() && Readable(listener_);
         ++accepted) {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      ++connections_;
      ServeConnection(fd, &next);
      ::close(fd);
    }
  }

  std::vector<Step> script_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<int> noops_{0};
  std::thread thread_;
};

std::unique_ptr<MemcachedBackend> Connect(int port, Protocol protocol = Protocol::kText) {
  MemcachedOptions options;
  options.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(port), 1});
  options.protocol = protocol;
  options.pool.connection.io_timeout = std::chrono::milliseconds(300);
  // No rest after failures: every call here goes to the server.
  options.pool.retry_timeout = std::chrono::milliseconds(0);
  return std::make_unique<MemcachedBackend>(std::move(options));
}

// `reply` at every split, cut = 1 .. size - 1.
void AddEverySplit(std::vector<Step>* script, const std::string& reply) {
  for (std::size_t cut = 1; cut < reply.size(); ++cut) script->push_back({reply, cut});
}

// A meta remove's success, sent whole.
const Step kMetaRemoved = {"HD O0\r\n", 7};

// A reply of a split-reply case, and the call that reads it with what that
// call must come to.
struct SplitReply {
  std::string reply;
  void (*call_and_check)(MemcachedBackend& backend);
};

void RemoveFinds(MemcachedBackend& backend) { CHECK(backend.Remove("k").ok()); }

void RemoveMisses(MemcachedBackend& backend) { CHECK(backend.Remove("k").IsNotFound()); }

void IncrReachesMax(MemcachedBackend& backend) {
  std::uint64_t value = 0;
  CHECK(backend.Incr("k", 1, &value).ok());
  CHECK(value == 18446744073709551615u);
}

void SetStores(MemcachedBackend& backend) {
  CHECK(backend.Store(StoreMode::kSet, "k", ItemView("v"), {}).ok());
}

void GetHits(MemcachedBackend& backend) {
  Item item;
  REQUIRE(backend.Get("k", &item).ok());
  CHECK(item.value == "hello");
  CHECK(item.flags == 7);
  CHECK(item.cas == 99);
}

void GetMisses(MemcachedBackend& backend) {
  Item item;
  CHECK(backend.Get("k", &item).IsNotFound());
}

// What the cases below that hold for both protocols need of each: the replies
// they script and what the calls reading them come to.
struct ProtocolCases {
  std::string name;
  Protocol protocol;
  // A remove's success, sent whole. A call that connects (the first, or the
  // one after a dropped connection) takes the single path too.
  Step removed;
  // Replies each read whole at every split, one call each, on one connection.
  std::vector<SplitReply> split;
  // Replies a remove must fail on and drop its connection for.
  std::vector<std::string> bad;
  // Where a bad reply is cut: early enough that the call cannot end on the
  // first piece before the rest arrives.
  std::size_t (*bad_cut)(const std::string& reply);
  // A get's hit on k of "v0", then hits that are not k's (another key, or
  // another command's token), each a protocol error, and k's hit of "right".
  std::string hit_v0;
  std::vector<std::string> stray_hits;
  std::string hit_right;
};

ProtocolCases TextCases() {
  const std::string deleted = "DELETED\r\n";
  return {
      .name = "text",
      .protocol = Protocol::kText,
      .removed = {deleted, deleted.size()},
      .split = {{deleted, &RemoveFinds},
                {"NOT_FOUND\r\n", &RemoveMisses},
                {"18446744073709551615\r\n", &IncrReachesMax},
                {"STORED\r\n", &SetStores},
                {"VALUE k 7 5 99\r\nhello\r\nEND\r\n", &GetHits}},
      .bad = {"DELETEX\r\n", "DELETED\r\r\n", "DELETEDX\n", "DELETED\n\n", "ELETED\r\n",
              "NOT_FOUNDX\r\n", "STORED\r\n", "12\r\n", "DELETED\n", "ERROR\r\n", "\r\n",
              "CLIENT_ERROR bad command line format\r\n"},
      .bad_cut = [](const std::string& reply) { return reply.size() / 2; },
      .hit_v0 = "VALUE k 0 2\r\nv0\r\nEND\r\n",
      .stray_hits = {"VALUE other 0 5\r\nhello\r\nEND\r\n"},
      .hit_right = "VALUE k 0 5\r\nright\r\nEND\r\n",
  };
}

ProtocolCases MetaCases() {
  return {
      .name = "meta",
      .protocol = Protocol::kMeta,
      .removed = kMetaRemoved,
      .split = {{"HD O0\r\n", &RemoveFinds},
                {"NF O0\r\n", &RemoveMisses},
                {"VA 20 O0\r\n18446744073709551615\r\n", &IncrReachesMax},
                {"HD O0\r\n", &SetStores},
                {"VA 5 f7 c99 O0\r\nhello\r\n", &GetHits},
                {"EN O0\r\n", &GetMisses}},
      .bad =
          {
              "HD O1\r\n",           // another command's token
              "HD\r\n",              // no token
              "HD O0\r\nHD O0\r\n",  // one reply too many
              "HD O0\r\nMN\r\n",     // an MN nobody asked for
              "MN\r\n",
              "EN O0\r\n",  // a reply md never gets
              "HX O0\r\n",
              "HD O0\n",
              "HD Ox\r\n",
              "\r\n",
              "ERROR\r\n",
              "CLIENT_ERROR bad command line format\r\n",
              "SERVER_ERROR out of memory\r\n",
          },
      .bad_cut = [](const std::string&) -> std::size_t { return 3; },
      .hit_v0 = "VA 2 O0\r\nv0\r\n",
      .stray_hits = {"VA 5 O0 kother\r\nhello\r\n", "VA 5 O3\r\nhello\r\n"},
      .hit_right = "VA 5 O0\r\nright\r\n",
  };
}

const std::vector<ProtocolCases>& BothProtocols() {
  static const std::vector<ProtocolCases> both = {TextCases(), MetaCases()};
  return both;
}

}  // namespace

TEST_CASE("single, both protocols: a reply split at any byte is read whole, on one connection",
          "[memcached][single][meta]") {
  for (const ProtocolCases& cases : BothProtocols()) {
    DYNAMIC_SECTION(cases.name) {
      std::vector<Step> script = {cases.removed};
      for (const SplitReply& split : cases.split) AddEverySplit(&script, split.reply);
      ScriptedServer server(script);
      auto backend = Connect(server.port(), cases.protocol);
      REQUIRE(backend->Remove("k").ok());
      for (const SplitReply& split : cases.split) {
        for (std::size_t cut = 1; cut < split.reply.size(); ++cut) {
          INFO(cases.name << " reply '" << split.reply << "' cut at " << cut);
          split.call_and_check(*backend);
        }
      }
      backend.reset();
      CHECK(server.connections() == 1);
      // No call took the batch path (a meta batch ends with mn).
      CHECK(server.noops() == 0);
    }
  }
}

TEST_CASE("single, both protocols: garbage, stray replies and error lines drop the connection",
          "[memcached][single][meta]") {
  for (const ProtocolCases& cases : BothProtocols()) {
    DYNAMIC_SECTION(cases.name) {
      // Each bad reply is followed by a good one, which the next call reads on
      // a new connection: nothing of the bad reply is left to be misread.
      std::vector<Step> script = {cases.removed};
      for (const std::string& reply : cases.bad) {
        script.push_back({reply, cases.bad_cut(reply)});
        script.push_back(cases.removed);
      }
      ScriptedServer server(script);
      auto backend = Connect(server.port(), cases.protocol);
      REQUIRE(backend->Remove("k").ok());
      for (const std::string& reply : cases.bad) {
        INFO(cases.name << " reply '" << reply << "'");
        const Status s = backend->Remove("k");
        INFO("status " << s.ToString());
        if (reply.starts_with("CLIENT_ERROR")) {
          CHECK(s.IsInvalidArgument());
        } else if (reply.starts_with("SERVER_ERROR")) {
          CHECK(s.IsIoError());
        } else {
          CHECK(s.IsProtocolError());
        }
        CHECK(backend->Remove("k").ok());
      }
      backend.reset();
      // A connection per bad reply: none was reused after it.
      CHECK(server.connections() == 1 + static_cast<int>(cases.bad.size()));
    }
  }
}

TEST_CASE("single, both protocols: a stalled reply is a timeout, and the next call reconnects",
          "[memcached][single][meta]") {
  for (const ProtocolCases& cases : BothProtocols()) {
    DYNAMIC_SECTION(cases.name) {
      ScriptedServer server({cases.removed, {"", 0, true}, cases.removed});
      auto backend = Connect(server.port(), cases.protocol);
      REQUIRE(backend->Remove("k").ok());
      const Status stalled = backend->Remove("k");
      INFO(cases.name << " status " << stalled.ToString());
      CHECK(stalled.IsTimeout());
      CHECK(stalled.message().find("no reply within the I/O timeout") != std::string_view::npos);
      CHECK(backend->Remove("k").ok());
      backend.reset();
      CHECK(server.connections() == 2);
    }
  }
}

TEST_CASE("single, both protocols: a value for another key or token is a protocol error",
          "[memcached][single][meta]") {
  for (const ProtocolCases& cases : BothProtocols()) {
    DYNAMIC_SECTION(cases.name) {
      std::vector<Step> script = {{cases.hit_v0, cases.hit_v0.size()}};
      for (const std::string& stray : cases.stray_hits) {
        script.push_back({stray, 9});
        script.push_back({cases.hit_right, cases.hit_right.size()});
      }
      ScriptedServer server(script);
      auto backend = Connect(server.port(), cases.protocol);
      Item item;
      REQUIRE(backend->Get("k", &item).ok());
      REQUIRE(item.value == "v0");
      for (const std::string& stray : cases.stray_hits) {
        INFO(cases.name << " reply '" << stray << "'");
        const Status wrong = backend->Get("k", &item);
        INFO("status " << wrong.ToString());
        CHECK(wrong.IsProtocolError());
        CHECK(item.value != "hello");
        // The connection that carried the stray value was dropped: the next
        // get reads its own reply on a new one.
        REQUIRE(backend->Get("k", &item).ok());
        CHECK(item.value == "right");
      }
      backend.reset();
      CHECK(server.connections() == 1 + static_cast<int>(cases.stray_hits.size()));
    }
  }
}

TEST_CASE("single: a server error is the operation's, and the connection is kept",
          "[memcached][single]") {
  const std::string deleted = "DELETED\r\n";
  const std::string busy = "SERVER_ERROR out of memory\r\n";
  const std::string too_large = "SERVER_ERROR object too large for cache\r\n";
  ScriptedServer server(
      {{deleted, deleted.size()}, {busy, 3}, {too_large, 20}, {deleted, deleted.size()}});
  auto backend = Connect(server.port());
  REQUIRE(backend->Remove("k").ok());
  CHECK(backend->Remove("k").IsIoError());
  CHECK(backend->Store(StoreMode::kSet, "k", ItemView("v"), {}).IsTooLarge());
  CHECK(backend->Remove("k").ok());
  backend.reset();
  CHECK(server.connections() == 1);
}

TEST_CASE("batch: VALUE lines out of order or for keys not asked fail the whole batch",
          "[memcached][single]") {
  const std::string out_of_order =
      "VALUE b 0 2\r\nvb\r\nVALUE a 0 2\r\nva\r\nVALUE c 0 2\r\nvc\r\nEND\r\n";
  const std::string unrequested =
      "VALUE a 0 2\r\nva\r\nVALUE zz 0 2\r\nvz\r\nVALUE c 0 2\r\nvc\r\nEND\r\n";
  const std::string a = "VALUE a 0 2\r\nva\r\nEND\r\n";
  const std::string c = "VALUE c 0 2\r\nvc\r\nEND\r\n";
  ScriptedServer server({{out_of_order, 20}, {a, a.size()}, {unrequested, 30}, {c, c.size()}});
  auto backend = Connect(server.port());
  auto gets = [] {
    std::vector<Operation> ops(3);
    const char* keys[] = {"a", "b", "c"};
    for (std::size_t i = 0; i < ops.size(); ++i) ops[i].key = keys[i];
    return ops;
  };
  std::vector<Operation> ops = gets();
  backend->Execute(ops);
  // The stream is out of step: no answer stands, and no key is taken for a miss.
  for (const Operation& op : ops) CHECK(op.status.IsProtocolError());
  Item item;
  REQUIRE(backend->Get("a", &item).ok());
  CHECK(item.value == "va");

  ops = gets();
  backend->Execute(ops);
  for (const Operation& op : ops) CHECK(op.status.IsProtocolError());
  REQUIRE(backend->Get("c", &item).ok());
  CHECK(item.value == "vc");
  backend.reset();
  CHECK(server.connections() == 3);
}

TEST_CASE("meta single: a server that hangs up mid-reply fails the call, and the next reconnects",
          "[memcached][single][meta]") {
  const std::string hit = "VA 5 O0\r\nhello\r\n";
  ScriptedServer server(
      {kMetaRemoved, {hit, 12, false, true}, {hit, 3, false, true}, {hit, hit.size()}});
  auto backend = Connect(server.port(), Protocol::kMeta);
  REQUIRE(backend->Remove("k").ok());
  Item item;
  for (int i = 0; i < 2; ++i) {
    const Status cut = backend->Get("k", &item);
    INFO("status " << cut.ToString());
    CHECK_FALSE(cut.ok());
    CHECK_FALSE(cut.IsNotFound());
    CHECK(item.value.empty());
  }
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "hello");
  backend.reset();
  CHECK(server.connections() == 3);
}

}  // namespace cachet::memcached::test
