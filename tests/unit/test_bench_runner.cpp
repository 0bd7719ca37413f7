// cachet-bench's runner: where each client's set-up runs.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cachet/thread_number.h"
#include "line_round_trip.h"
#include "runner.h"
#include "slice.h"

namespace cachet::bench {
namespace {

// A client that answers ok to everything and notes the thread of its set-up,
// and the connection-pool thread numbers of its set-up and of each iteration.
class RecordingClient : public Client {
 public:
  Status Get(std::string_view, std::string*) override {
    // The first iteration is set-up's probe; the second, the first slice's.
    if (numbers.size() == 1) std::this_thread::sleep_for(first_slice_delay);
    numbers.push_back(ThreadNumber(ThreadNumbering::kConnectionPools));
    return Status::OK();
  }
  Status Set(std::string_view, std::string_view) override {
    std::this_thread::sleep_for(setup_delay);
    setup_thread = std::this_thread::get_id();
    setup_number = ThreadNumber(ThreadNumbering::kConnectionPools);
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
  std::size_t setup_number = 0;
  std::vector<std::size_t> numbers;  // each iteration's, set-up's probe first
  std::chrono::milliseconds setup_delay{0};
  std::chrono::milliseconds first_slice_delay{0};
};

// Set-up writes one key (noting the thread); an iteration reads it.
const Scenario kProbe{
    "probe", "notes where set-up runs",
    [](Client& client, ScenarioState&) { return client.Set("k", "v"); },
    [](Client& client, ScenarioState& state) { return client.Get("k", &state.read_buffer); },
    [](Client&, ScenarioState&) {}};

// Columns of RecordingClients, as many clients in each as `clients` says.
std::vector<Column> RecordingColumns(const Target& target, std::vector<std::size_t> clients) {
  std::vector<Column> columns(clients.size());
  for (std::size_t c = 0; c < clients.size(); ++c) {
    columns[c].target = &target;
    for (std::size_t t = 0; t < clients[c]; ++t) {
      columns[c].clients.push_back(std::make_unique<RecordingClient>());
    }
  }
  return columns;
}

const RecordingClient& Recorded(const Column& column, std::size_t t) {
  return static_cast<const RecordingClient&>(*column.clients[t]);
}

RunPlan ShortPlan() {
  RunPlan plan;
  plan.ops = 20;
  plan.repeat = 1;
  return plan;
}

// The set-up threads of a column of `clients` clients, after a short run.
std::vector<std::thread::id> SetUpThreads(std::size_t clients) {
  const Target target{"probe", "", nullptr};
  std::vector<Column> columns = RecordingColumns(target, {clients});
  const ScenarioFigures figures = RunScenario(kProbe, columns, ShortPlan());
  REQUIRE(figures.figures.size() == 1);
  REQUIRE(figures.figures[0].ran);
  std::vector<std::thread::id> threads;
  for (std::size_t t = 0; t < clients; ++t) {
    threads.push_back(Recorded(columns[0], t).setup_thread);
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

TEST_CASE("each client of a column keeps its set-up's thread numbers in every slice",
          "[bench]") {
  // So each keeps its pooled connection and its memory store lane: a lane handed
  // from one client's thread to the other's would mix their entries, which then
  // share cache lines. Run from a thread that holds no number yet. Were it not
  // numbered first, the 2-client column would set up as the lowest free x and y,
  // the 1-client column's set-up would give the running thread x, and the slices
  // would run as y and z. Client 1 sets up late and client 0 starts its first
  // slice late: were the clients' threads to take numbers as they come, client 0
  // would set up as x and run its slices as y. Were client 0's thread free to end
  // first, client 1's would take the number it gave back.
  const Target target{"probe", "", nullptr};
  std::vector<Column> columns = RecordingColumns(target, {2, 1});
  static_cast<RecordingClient&>(*columns[0].clients[1]).setup_delay = std::chrono::milliseconds(20);
  static_cast<RecordingClient&>(*columns[0].clients[0]).first_slice_delay =
      std::chrono::milliseconds(20);
  std::thread runner([&] { (void)RunScenario(kProbe, columns, ShortPlan()); });
  runner.join();
  const RecordingClient& first = Recorded(columns[0], 0);
  const RecordingClient& second = Recorded(columns[0], 1);
  CHECK(first.setup_number < second.setup_number);  // numbered in the clients' order
  REQUIRE(first.numbers.size() == second.numbers.size());
  REQUIRE(first.numbers.size() > 1);
  for (std::size_t k = 1; k < first.numbers.size(); ++k) {  // each slice
    INFO("slice " << k);
    CHECK(first.numbers[k] == first.setup_number);
    CHECK(second.numbers[k] == second.setup_number);
  }
}

}  // namespace

TEST_CASE("split keys give a column's threads shares that add up to --keys", "[bench]") {
  // So --split-keys holds the data equal at every thread count; without it each
  // thread rotates through all of them.
  RunPlan plan = ShortPlan();
  plan.keys = 100001;
  CHECK(ClientKeys(plan, 2, 0) == 100001);
  plan.split_keys = true;
  CHECK(ClientKeys(plan, 1, 0) == 100001);
  CHECK(ClientKeys(plan, 2, 0) + ClientKeys(plan, 2, 1) == 100001);
  CHECK(ClientKeys(plan, 2, 0) - ClientKeys(plan, 2, 1) == 1);
  plan.keys = 2;
  CHECK(ClientKeys(plan, 3, 2) == 1);  // never a thread without a key

  // And each client's scenario state gets its share.
  const Target target{"probe", "", nullptr};
  std::vector<Column> columns = RecordingColumns(target, {4});
  std::vector<std::size_t> counts(4);
  static std::vector<std::size_t>* seen = nullptr;
  seen = &counts;
  const Scenario counting{
      "count", "notes each client's key count",
      [](Client& client, ScenarioState& state) {
        // The prefix is "cb<column>.<client>:".
        const std::size_t client_index = std::stoul(state.key_prefix.substr(4));
        (*seen)[client_index] = state.key_count;
        return client.Set("k", "v");
      },
      [](Client& client, ScenarioState& state) { return client.Get("k", &state.read_buffer); },
      [](Client&, ScenarioState&) {}};
  plan.keys = 10;
  (void)RunScenario(counting, columns, plan);
  CHECK(counts == std::vector<std::size_t>{3, 3, 2, 2});
}

namespace {

// A client whose reads take about a millisecond and note when the first began
// and the last ended.
class PacedClient : public RecordingClient {
 public:
  Status Get(std::string_view, std::string*) override {
    const auto began = std::chrono::steady_clock::now();
    if (!first) first = began;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    last = std::chrono::steady_clock::now();
    return Status::OK();
  }
  std::optional<std::chrono::steady_clock::time_point> first;
  std::chrono::steady_clock::time_point last;
};

}  // namespace

TEST_CASE("a slice of several threads is timed over its loops: first start to last end",
          "[bench]") {
  std::vector<std::unique_ptr<Client>> clients;
  for (int t = 0; t < 2; ++t) clients.push_back(std::make_unique<PacedClient>());
  std::vector<ScenarioState> states(2);
  const SliceLimits by_time{1000000, std::chrono::milliseconds(30), nullptr};
  const auto before = std::chrono::steady_clock::now();
  const Tally tally = RunSlice(kProbe, clients, states, by_time);
  const auto after = std::chrono::steady_clock::now();
  // Each loop runs its 30 ms, so the slice does too; its time covers every
  // iteration and lies within the call (which also made and joined the threads).
  CHECK(tally.elapsed >= std::chrono::milliseconds(30));
  auto first = std::chrono::steady_clock::time_point::max();
  auto last = std::chrono::steady_clock::time_point::min();
  for (const auto& client : clients) {
    const auto& paced = static_cast<const PacedClient&>(*client);
    REQUIRE(paced.first.has_value());
    first = std::min(first, *paced.first);
    last = std::max(last, paced.last);
  }
  CHECK(tally.elapsed >= last - first);
  CHECK(tally.elapsed <= after - before);
  CHECK(tally.iterations >= 2);

  // A slice bounded by a count instead: both threads' iterations, in a time above 0.
  const SliceLimits by_count{10, std::chrono::nanoseconds::max(), nullptr};
  const Tally counted = RunSlice(kProbe, clients, states, by_count);
  CHECK(counted.iterations == 10);
  CHECK(counted.elapsed >= std::chrono::milliseconds(5));  // five 1 ms reads on each thread
}

TEST_CASE("a cache line's round trip between two threads is measured, or not at all",
          "[bench]") {
  for (int too_few : {-1, 0, 1}) {  // nothing to time: at once, not after the limit
    CHECK_FALSE(LineRoundTrip(too_few, std::chrono::seconds(60)).has_value());
  }
  if (std::thread::hardware_concurrency() < 2) return;  // a lone core cannot spin both sides
  // Few trips and a long limit: with both spinners on one busy core (another
  // test on the other), each trip can take a scheduler's time slice.
  const std::optional<std::chrono::nanoseconds> trip =
      LineRoundTrip(200, std::chrono::seconds(60));
  REQUIRE(trip.has_value());
  CHECK(trip->count() > 0);
  CHECK(*trip < std::chrono::milliseconds(300));  // 200 of them ran within the limit
}

}  // namespace cachet::bench
