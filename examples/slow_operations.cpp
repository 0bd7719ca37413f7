// CacheObserver: every call of a Cache, as it ends, handed to the application.
// This one prints the calls slower than a threshold, with their store, server
// and outcome; the same hook can open OpenTelemetry spans or write logs.
// Usage: example_slow_operations [CONFIG [section.key=value]...]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "cachet/observer.h"
#include "example_cache.h"

namespace {

// Prints each call that took longer than `threshold`. OnOperation runs on the
// calling thread before the call returns, so it only formats one line.
class SlowOperationLog : public cachet::CacheObserver {
 public:
  explicit SlowOperationLog(std::chrono::nanoseconds threshold) : threshold_(threshold) {}

  void OnOperation(const cachet::OperationEvent& e) noexcept override {
    ++seen_;
    if (e.duration < threshold_) return;
    ++slow_;
    std::printf("slow %s: %zu key(s) on %s%s%.*s, %s, %.1f ms\n",
                std::string(cachet::CacheOpName(e.op)).c_str(), e.keys,
                std::string(e.store).c_str(), e.server.empty() ? "" : " ",
                static_cast<int>(e.server.size()), e.server.data(), e.status.ToString().c_str(),
                std::chrono::duration<double, std::milli>(e.duration).count());
  }

  int seen() const { return seen_.load(); }
  int slow() const { return slow_.load(); }

 private:
  const std::chrono::nanoseconds threshold_;
  std::atomic<int> seen_{0};
  std::atomic<int> slow_{0};
};

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  auto log = std::make_shared<SlowOperationLog>(std::chrono::milliseconds(20));
  cache->SetObserver(log);

  (void)cache->Set("fast", std::string("quick"));  // well under the threshold
  (void)cache->Get("fast");
  (void)cache->Remove("report:2026");  // start from a miss (not_found is fine)
  // A loader that takes 50 ms: its load and the GetOrCompute around it are slow.
  auto report = cache->GetOrCompute<std::string>("report:2026", [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return cachet::Result<std::string>(std::string("totals"));
  });

  cache->SetObserver(nullptr);  // no observer: calls report nothing and cost nothing more
  (void)cache->Get("fast");

  std::printf("%d calls observed, %d slow\n", log->seen(), log->slow());
  // Set, get, remove, load and get_or_compute were seen; the last two were slow.
  return report.hit() && log->seen() == 5 && log->slow() == 2 ? 0 : 1;
}
