// The redis-cluster conformance fixture: starts a 3-master Redis Cluster on free
// loopback ports and points a Cache at it with `mode = cluster`, so the whole
// suite runs through slot routing and redirections. The cluster lives as long as
// the fixture; its nodes are stopped by PID and their files deleted.
#include <memory>
#include <string>

#include "backend_fixture.h"
#include "support/redis_cluster.h"

namespace cachet::conformance::redis_cluster_fixture {

namespace {

class RedisClusterFixture : public BackendFixture {
 public:
  Result<Config> Setup() override {
    auto started = test::RedisCluster::Start();
    if (!started.ok()) return started.status();
    cluster_ = std::move(started.value());
    return Config::Parse(
        "[cache]\n"
        "backend = redis\n"
        "namespace = conformance:\n"
        "[redis]\n"
        "mode = cluster\n"
        "servers = " +
            cluster_->seeds() + "\n",
        "redis-cluster conformance fixture");
  }

 private:
  std::unique_ptr<test::RedisCluster> cluster_;
};

}  // namespace

std::unique_ptr<BackendFixture> Make() { return std::make_unique<RedisClusterFixture>(); }

}  // namespace cachet::conformance::redis_cluster_fixture
