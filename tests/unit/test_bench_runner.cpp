// cachet-bench's runner: where each client's set-up runs.
#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runner.h"

namespace cachet::bench {
namespace {

// A client that answers ok to everything and notes the thread of its set-up.
class RecordingClient : public Client {
 public:
  Status Get(std::string_view, std::string*) override { return Status::OK(); }
  Status Set(std::string_view, std::string_view) override {
    setup_thread = std::this_thread::get_id();
    return Status::OK();
  }
  Status Remove(std::string_view) override { return Status::OK(); }
  Status Incr(std::string_view, std::uint64_t*) override { return Status::OK(); }
  Status Decr(std::string_view, std::uint64_t*) override { return Status::OK(); }
  Status GetMulti(const std::vector<std::string>&, std::size_t*) override { return Status::OK(); }
  Status GetJson(std::string_view, Json*) override { return Status::OK(); }
  Status SetJson(std::string_view, const Json&) override { return Status::OK(); }
  Status GetCompressed(std::string_view, std::string*) override { return Status::OK(); }
  Status SetCompressed(std::string_view, std::string_view) override { return Status::OK(); }
  Status IncrPipelined(std::string_view, std::size_t) override { return Status::OK(); }
  Status IncrNoreply(std::string_view) override { return Status::OK(); }

  std::thread::id setup_thread;
};

// Set-up writes one key (noting the thread); an iteration reads it.
const Scenario kProbe{
    "probe", "notes where set-up runs",
    [](Client& client, ScenarioState&) { return client.Set("k", "v"); },
    [](Client& client, ScenarioState& state) { return client.Get("k", &state.read_buffer); },
    [](Client&, ScenarioState&) {}};

// The set-up threads of a column of `clients` clients, after a short run.
std::vector<std::thread::id> SetUpThreads(std::size_t clients) {
  Target target{"probe", "", nullptr};
  std::vector<Column> columns(1);
  columns[0].target = &target;
  for (std::size_t t = 0; t < clients; ++t) {
    columns[0].clients.push_back(std::make_unique<RecordingClient>());
  }
  RunPlan plan;
  plan.ops = 20;
  plan.repeat = 1;
  const ScenarioFigures figures = RunScenario(kProbe, columns, plan);
  REQUIRE(figures.figures.size() == 1);
  REQUIRE(figures.figures[0].ran);
  std::vector<std::thread::id> threads;
  for (const auto& client : columns[0].clients) {
    threads.push_back(static_cast<const RecordingClient&>(*client).setup_thread);
  }
  return threads;
}

TEST_CASE("a column of one client sets up on the caller's thread, where its slices run",
          "[bench]") {
  CHECK(SetUpThreads(1) == std::vector<std::thread::id>{std::this_thread::get_id()});
}

TEST_CASE("a column of several clients sets each up on a thread of its own, as its slices run",
          "[bench]") {
  // So a Cache that keeps a connection per thread opens all of them at set-up,
  // one after another, as the peers' clients do.
  const std::vector<std::thread::id> threads = SetUpThreads(3);
  for (std::size_t t = 0; t < threads.size(); ++t) {
    INFO("client " << t);
    CHECK(threads[t] != std::thread::id{});
    CHECK(threads[t] != std::this_thread::get_id());
    for (std::size_t u = 0; u < t; ++u) CHECK(threads[t] != threads[u]);
  }
}

}  // namespace
}  // namespace cachet::bench
