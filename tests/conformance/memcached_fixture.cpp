// The memcached conformance fixture: starts a memcached on a free loopback port
// and points a Cache at it. The protocol is $CACHET_CONFORMANCE_MEMCACHED_PROTOCOL
// ("meta" when unset), so the suite runs once per protocol (the text run is
// registered in tests/integration/CMakeLists.txt). The server lives as long as
// the fixture and is stopped by its PID.
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "backend_fixture.h"
#include "support/memcached_server.h"

namespace cachet::conformance::memcached_fixture {

namespace {

// memcached's own default item limit, which the plugin's max_item_size mirrors.
constexpr std::size_t kMaxItemSize = 1048576;

std::string SelectedProtocol() {
  const char* protocol = std::getenv("CACHET_CONFORMANCE_MEMCACHED_PROTOCOL");
  return protocol != nullptr && *protocol != '\0' ? protocol : "meta";
}

class MemcachedFixture : public BackendFixture {
 public:
  Result<Config> Setup() override {
    auto started = test::StartMemcached();
    if (!started.ok()) return started.status();
    server_ = std::move(started.value());
    return Config::Parse(
        "[cache]\n"
        "backend = memcached\n"
        "namespace = conformance:\n"
        "[memcached]\n"
        "servers = " +
            server_->address() +
            "\n"
            "protocol = " +
            SelectedProtocol() +
            "\n"
            "max_item_size = " +
            std::to_string(kMaxItemSize) + "\n",
        "memcached conformance fixture");
  }
  std::optional<std::size_t> max_value_size() const override { return kMaxItemSize; }
  std::optional<std::size_t> max_key_size() const override { return 250; }

 private:
  std::unique_ptr<test::ServerProcess> server_;
};

}  // namespace

std::unique_ptr<BackendFixture> Make() { return std::make_unique<MemcachedFixture>(); }

}  // namespace cachet::conformance::memcached_fixture
