// The memory store's conformance fixture: nothing to start, defaults kept.
#include <memory>
#include <optional>

#include "backend_fixture.h"

namespace cachet::conformance::memory_fixture {

namespace {

class MemoryFixture : public BackendFixture {
 public:
  Result<Config> Setup() override {
    return Config::Parse(
        "[cache]\n"
        "backend = memory\n"
        "namespace = conformance:\n"
        "[memory]\n"
        "max_bytes = 134217728\n",
        "memory conformance fixture");
  }
  // The plugin's defaults: max_item_size and max_key_size.
  std::optional<std::size_t> max_value_size() const override { return 1048576; }
  std::optional<std::size_t> max_key_size() const override { return 250; }
};

}  // namespace

std::unique_ptr<BackendFixture> Make() { return std::make_unique<MemoryFixture>(); }

}  // namespace cachet::conformance::memory_fixture
