// A name lookup is part of the connect and ends at connect_timeout, however long
// the resolver takes. This test's own getaddrinfo() stands in for a resolver that
// does not answer: it takes precedence over the C library's for libcachet (the
// executable's definition comes first), stalls 2 s for one name and hands every
// other name to the C library.
#include <dlfcn.h>
#include <netdb.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "cachet/net/connection.h"
#include "cachet/net/fan_out.h"
#include "launchers/memcached_server.h"
#include "support/line_reader.h"
#include "launchers/server_process.h"

namespace {

constexpr const char* kStalledName = "stalled.cachet.test";
std::atomic<int> g_stalled_lookups{0};

}  // namespace

// Exported (the build hides symbols by default), so libcachet's calls find it.
extern "C" [[gnu::visibility("default")]] int getaddrinfo(const char* node, const char* service,
                                                          const addrinfo* hints, addrinfo** res) {
  using Real = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
  static const auto real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "getaddrinfo"));
  if (node != nullptr && std::string(node) == kStalledName) {
    if (hints != nullptr && (hints->ai_flags & AI_NUMERICHOST) != 0) return EAI_NONAME;
    ++g_stalled_lookups;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    return EAI_AGAIN;
  }
  return real(node, service, hints, res);
}

namespace cachet::net {
namespace {

using std::chrono::milliseconds;

using test::LineReader;

TEST_CASE("a name the resolver does not answer times out at connect_timeout", "[connection]") {
  Connection c({kStalledName, 11211, 1}, {milliseconds(150), milliseconds(1000)});
  const int before = g_stalled_lookups.load();
  const Clock::time_point start = Clock::now();
  const Status s = c.EnsureConnected();
  const auto took = Clock::now() - start;
  INFO(s.ToString());
  CHECK(g_stalled_lookups.load() == before + 1);  // the stand-in was asked
  CHECK(s.IsTimeout());
  CHECK(s.message().find("resolve: no answer in time") != std::string::npos);
  CHECK(took < milliseconds(1000));
  CHECK_FALSE(c.connected());
}

TEST_CASE("a numeric address and localhost still connect", "[connection]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = test::StartMemcached();
  REQUIRE(server.ok());
  const auto port = static_cast<std::uint16_t>((*server)->port());
  for (const char* host : {"127.0.0.1", "localhost"}) {
    INFO(host);
    Connection c({host, port, 1}, {milliseconds(500), milliseconds(1000)});
    CHECK(c.EnsureConnected().ok());
  }
}

TEST_CASE("a stalled lookup in a fan-out leaves the other server's exchange whole",
          "[fan_out]") {
  REQUIRE(test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = test::StartMemcached();
  REQUIRE(server.ok());
  const ConnectionOptions options{milliseconds(150), milliseconds(400)};
  Connection good({"127.0.0.1", static_cast<std::uint16_t>((*server)->port()), 1}, options);
  Connection stalled({kStalledName, 11211, 1}, options);
  const std::string request = "version\r\n";
  LineReader readers[2];
  Exchange ex[2];
  Connection* connections[2] = {&stalled, &good};
  for (int i = 0; i < 2; ++i) {
    ex[i].connection = connections[i];
    ex[i].reader = &readers[i];
    ex[i].request.push_back({const_cast<char*>(request.data()), request.size()});
  }
  const Clock::time_point start = Clock::now();
  RunExchanges(ex, start + milliseconds(1200));
  CHECK(Clock::now() - start < milliseconds(1200));
  INFO(ex[0].status.ToString() << " / " << ex[1].status.ToString());
  CHECK(ex[0].status.IsTimeout());
  CHECK(ex[1].status.ok());
  CHECK(readers[1].line.rfind("VERSION", 0) == 0);
}

}  // namespace
}  // namespace cachet::net
