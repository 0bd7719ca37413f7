// ThreadNumber: live threads hold different numbers, and an ended thread's
// number goes to the next thread, so a slot table indexed by number gives
// each live thread its own slot however many threads came before.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <set>
#include <thread>
#include <vector>

#include "cachet/thread_number.h"

using cachet::ThreadNumber;

TEST_CASE("a thread keeps its number for its life", "[thread_number]") {
  const std::size_t mine = ThreadNumber();
  CHECK(ThreadNumber() == mine);
  std::size_t other = mine;
  std::thread([&] { other = ThreadNumber(); }).join();
  CHECK(other != mine);
  CHECK(ThreadNumber() == mine);
}

TEST_CASE("threads that end give their number to the next one", "[thread_number]") {
  (void)ThreadNumber();  // the main thread holds one throughout
  std::vector<std::size_t> numbers;
  for (int i = 0; i < 100; ++i) {
    std::size_t number = 0;
    std::thread([&] { number = ThreadNumber(); }).join();
    numbers.push_back(number);
  }
  // One after another, each finds the same lowest free number: a counter
  // that never gives numbers back would hand out 100 different ones.
  CHECK(std::set<std::size_t>(numbers.begin(), numbers.end()).size() == 1);
}

TEST_CASE("live threads hold different numbers, the lowest free ones", "[thread_number]") {
  const std::size_t mine = ThreadNumber();
  constexpr std::size_t kThreads = 16;
  std::vector<std::size_t> numbers(kThreads);
  std::atomic<std::size_t> numbered{0};
  std::atomic<bool> release{false};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      numbers[t] = ThreadNumber();
      numbered.fetch_add(1);
      // Held until every thread has its number; bounded by the test's end.
      while (!release.load()) std::this_thread::yield();
    });
  }
  while (numbered.load() < kThreads) std::this_thread::yield();
  release = true;
  for (std::thread& thread : threads) thread.join();
  const std::set<std::size_t> distinct(numbers.begin(), numbers.end());
  CHECK(distinct.size() == kThreads);
  CHECK(distinct.count(mine) == 0);
  // No other thread lives in this test: the numbers are the lowest free ones.
  CHECK(*distinct.rbegin() <= kThreads);
}
