// The scaling study: private work on one thread and on several at once.
#include "scaling_study.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <latch>
#include <thread>
#include <vector>

#include "slice.h"

namespace cachet::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The clock is read once per this many steps, so it stays out of the work.
constexpr std::uint64_t kStepsPerClockRead = 4096;
constexpr std::size_t kChaseSlots = 1024;  // 4 KiB: stays in L1

// One kind of private work: `steps(chase, seed, n)` runs n steps over the thread's
// own data and returns a value that depends on all of them, so none is optimized away.
struct Kind {
  const char* name;
  const char* what;
  std::uint64_t (*steps)(std::vector<std::uint32_t>& chase, std::uint64_t seed, std::uint64_t n);
};

// Dependent loads from a table in L1, as a hash table probe's.
std::uint64_t ChaseLoads(std::vector<std::uint32_t>& chase, std::uint64_t seed, std::uint64_t n) {
  std::uint32_t at = static_cast<std::uint32_t>(seed % kChaseSlots);
  for (std::uint64_t i = 0; i < n; ++i) at = chase[at];
  return at;
}

// Four independent multiply-add chains, as hashing does.
std::uint64_t MultiplyAdd(std::vector<std::uint32_t>&, std::uint64_t seed, std::uint64_t n) {
  std::uint64_t a = seed, b = seed + 1, c = seed + 2, d = seed + 3;
  for (std::uint64_t i = 0; i < n; ++i) {
    a = a * 6364136223846793005ULL + 1;
    b = b * 6364136223846793005ULL + 3;
    c = c * 2862933555777941757ULL + 5;
    d = d * 2862933555777941757ULL + 7;
  }
  return a ^ b ^ c ^ d;
}

// The decimal digits of a number, as a counter's text is written (the compiler
// turns the division by 10 into a multiply and a shift).
std::uint64_t DecimalDigits(std::vector<std::uint32_t>&, std::uint64_t seed, std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t v = seed + i * 7919; v != 0; v /= 10) sum += v % 10;
  }
  return sum;
}

constexpr std::array kKinds = {
    Kind{"loads", "dependent loads within L1", ChaseLoads},
    Kind{"multiply", "independent multiply-add chains", MultiplyAdd},
    Kind{"digits", "decimal digits of 14-digit numbers", DecimalDigits},
};

// Steps per second of `kind` on `threads` threads started together, each for
// `duration`: all their steps over the time from the first start to the last end.
double Rate(const Kind& kind, unsigned threads, std::chrono::nanoseconds duration) {
  std::vector<LoopSpan> spans(threads);
  std::vector<std::uint64_t> steps(threads);  // written once per thread, after its loop
  std::latch start(static_cast<std::ptrdiff_t>(threads));
  auto body = [&](unsigned t) {
    std::vector<std::uint32_t> chase(kChaseSlots);
    for (std::size_t i = 0; i < kChaseSlots; ++i) {
      chase[i] = static_cast<std::uint32_t>((i * 389 + 1) % kChaseSlots);
    }
    volatile std::uint64_t sink = 0;
    std::uint64_t done = 0;
    start.arrive_and_wait();
    const Clock::time_point began = Clock::now();
    Clock::time_point now = began;
    do {  // at least one batch, whatever the duration
      sink = sink + kind.steps(chase, 12345678901234ULL + t + done, kStepsPerClockRead);
      done += kStepsPerClockRead;
      now = Clock::now();
    } while (now - began < duration);
    spans[t] = {began, now};
    steps[t] = done;
  };
  std::vector<std::thread> others;
  for (unsigned t = 1; t < threads; ++t) others.emplace_back(body, t);
  body(0);
  for (std::thread& thread : others) thread.join();
  std::uint64_t total = 0;
  for (const std::uint64_t made : steps) total += made;
  return static_cast<double>(total) / std::chrono::duration<double>(Covered(spans)).count();
}

}  // namespace

int RunScalingStudy(const BenchOptions& options) {
  const unsigned threads = std::max(2u, options.threads());
  const auto duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options.duration_seconds));
  std::cout << "cachet-bench --scaling: private work (no shared line, lock or allocation) on "
            << threads << " threads over 1 thread, " << options.repeat << " round(s) of "
            << options.duration_seconds << " s per kind and thread count, "
            << std::thread::hardware_concurrency() << " cores\n";
  std::vector<std::vector<double>> ratios(kKinds.size());
  for (unsigned round = 0; round < options.repeat; ++round) {
    for (std::size_t k = 0; k < kKinds.size(); ++k) {
      const double one = Rate(kKinds[k], 1, duration);
      const double many = Rate(kKinds[k], threads, duration);
      ratios[k].push_back(one > 0 ? many / one : 0.0);
    }
  }
  std::printf("%-10s %-36s %8s %13s\n", "work", "what", "median", "range");
  for (std::size_t k = 0; k < kKinds.size(); ++k) {
    std::vector<double>& r = ratios[k];
    std::sort(r.begin(), r.end());
    const std::size_t n = r.size();
    const double median = n % 2 == 1 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
    std::printf("%-10s %-36s %7.2fx %6.2f-%.2fx\n", kKinds[k].name, kKinds[k].what, median,
                r.front(), r.back());
  }
  std::cout << "About what a thread row could reach here now, were its threads to share "
               "nothing; above "
            << threads << "x, a one-thread run was slowed.\n";
  return 0;
}

}  // namespace cachet::bench
