// The Tokyo Tyrant conformance fixture: starts cachet-ttserver (the Tokyo Tyrant
// test server over Tokyo Cabinet) on a free loopback port and points a Cache at it.
// The server lives as long as the fixture and is stopped by its PID.
#include <memory>
#include <optional>
#include <string>

#include "backend_fixture.h"
#include "support/tt_server/tokyotyrant_server.h"

namespace cachet::conformance::tokyotyrant_fixture {

namespace {

// The largest value the fixture's config lets through (max_item_size).
constexpr std::size_t kMaxItemSize = 1048576;

class TokyoTyrantFixture : public BackendFixture {
 public:
  Result<Config> Setup() override {
    auto started = test::StartTokyoTyrant();
    if (!started.ok()) return started.status();
    server_ = std::move(started.value());
    return Config::Parse(
        "[cache]\n"
        "backend = tokyotyrant\n"
        "namespace = conformance:\n"
        "[tokyotyrant]\n"
        "servers = " +
            server_->address() +
            "\n"
            "max_item_size = " +
            std::to_string(kMaxItemSize) + "\n",
        "tokyotyrant conformance fixture");
  }
  std::optional<std::size_t> max_value_size() const override { return kMaxItemSize; }

 private:
  std::unique_ptr<test::ServerProcess> server_;
};

}  // namespace

std::unique_ptr<BackendFixture> Make() { return std::make_unique<TokyoTyrantFixture>(); }

}  // namespace cachet::conformance::tokyotyrant_fixture
