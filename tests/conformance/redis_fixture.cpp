// The redis conformance fixture: starts a diskless redis-server on a free loopback
// port and points a Cache at it. The server lives as long as the fixture and is
// stopped by its PID.
#include <memory>
#include <string>

#include "backend_fixture.h"
#include "support/redis_server.h"

namespace cachet::conformance::redis_fixture {

namespace {

class RedisFixture : public BackendFixture {
 public:
  Result<Config> Setup() override {
    auto started = test::StartRedis();
    if (!started.ok()) return started.status();
    server_ = std::move(started.value());
    return Config::Parse(
        "[cache]\n"
        "backend = redis\n"
        "namespace = conformance:\n"
        "[redis]\n"
        "servers = " +
            server_->address() + "\n",
        "redis conformance fixture");
  }

 private:
  std::unique_ptr<test::ServerProcess> server_;
};

}  // namespace

std::unique_ptr<BackendFixture> Make() { return std::make_unique<RedisFixture>(); }

}  // namespace cachet::conformance::redis_fixture
