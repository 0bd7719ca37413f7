// ThreadNumber: live threads hold different numbers, an ended thread's number
// goes to the next thread, each numbering counts only the threads that asked
// it, and a forked child's threads find the parent's other numbers free.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <set>
#include <thread>
#include <vector>

#include "cachet/thread_number.h"

using cachet::ThreadNumber;
using cachet::ThreadNumbering;

namespace {

constexpr ThreadNumbering kPools = ThreadNumbering::kConnectionPools;
constexpr ThreadNumbering kMemory = ThreadNumbering::kMemoryStores;

// Runs `count` threads at once, each taking its number in `numbering` and
// holding it until all have one; returns the numbers.
std::vector<std::size_t> NumbersOfLiveThreads(std::size_t count, ThreadNumbering numbering) {
  std::vector<std::size_t> numbers(count);
  std::atomic<std::size_t> numbered{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < count; ++t) {
    threads.emplace_back([&, t] {
      numbers[t] = ThreadNumber(numbering);
      numbered.fetch_add(1);
      // Ends once every thread has its number, which each takes at once.
      while (numbered.load() < count) std::this_thread::yield();
    });
  }
  for (std::thread& thread : threads) thread.join();
  return numbers;
}

}  // namespace

TEST_CASE("a thread keeps its number for its life", "[thread_number]") {
  const std::size_t mine = ThreadNumber(kPools);
  CHECK(ThreadNumber(kPools) == mine);
  std::size_t other = mine;
  std::thread([&] { other = ThreadNumber(kPools); }).join();
  CHECK(other != mine);
  CHECK(ThreadNumber(kPools) == mine);
}

TEST_CASE("threads that end give their number to the next one", "[thread_number]") {
  (void)ThreadNumber(kPools);  // the main thread holds one throughout
  std::vector<std::size_t> numbers;
  for (int i = 0; i < 100; ++i) {
    std::size_t number = 0;
    std::thread([&] { number = ThreadNumber(kPools); }).join();
    numbers.push_back(number);
  }
  // One after another, each finds the same lowest free number: a counter
  // that never gives numbers back would hand out 100 different ones.
  CHECK(std::set<std::size_t>(numbers.begin(), numbers.end()).size() == 1);
}

TEST_CASE("live threads hold different numbers, the lowest free ones", "[thread_number]") {
  const std::size_t mine = ThreadNumber(kPools);
  // Threads that came and went first leave no number taken.
  (void)NumbersOfLiveThreads(20, kPools);
  constexpr std::size_t kThreads = 16;
  const std::vector<std::size_t> numbers = NumbersOfLiveThreads(kThreads, kPools);
  const std::set<std::size_t> distinct(numbers.begin(), numbers.end());
  CHECK(distinct.size() == kThreads);
  CHECK(distinct.count(mine) == 0);
  CHECK(*distinct.rbegin() <= kThreads);
}

TEST_CASE("a numbering counts only the threads that asked it", "[thread_number]") {
  // Eight threads that only ever ask the memory stores' numbering...
  std::atomic<bool> release{false};
  std::atomic<int> holding{0};
  std::vector<std::thread> memory_only;
  for (int t = 0; t < 8; ++t) {
    memory_only.emplace_back([&] {
      (void)ThreadNumber(kMemory);
      holding.fetch_add(1);
      while (!release.load()) std::this_thread::yield();  // until the pools' threads are done
    });
  }
  while (holding.load() < 8) std::this_thread::yield();
  // ...leave the pools' numbers to the threads that use pools.
  const std::size_t mine = ThreadNumber(kPools);
  const std::vector<std::size_t> numbers = NumbersOfLiveThreads(8, kPools);
  release = true;
  for (std::thread& thread : memory_only) thread.join();
  std::set<std::size_t> distinct(numbers.begin(), numbers.end());
  distinct.insert(mine);
  CHECK(distinct.size() == 9);
  CHECK(*distinct.rbegin() <= 8);
}

namespace {
// Calls ThreadNumber from a thread_local destructor that runs after the
// thread gave its number back.
struct AsksAtExit {
  std::size_t* seen = nullptr;
  ~AsksAtExit() {
    if (seen != nullptr) *seen = ThreadNumber(kPools);
  }
};
}  // namespace

TEST_CASE("a thread_local destructor that runs late still reads the thread's number",
          "[thread_number]") {
  std::size_t number = 0;
  std::size_t seen_at_exit = 0;
  std::thread([&] {
    // Constructed before the first ask, so destroyed after the give-back.
    thread_local AsksAtExit asks;
    asks.seen = &seen_at_exit;
    number = ThreadNumber(kPools);
  }).join();
  CHECK(seen_at_exit == number);
}

TEST_CASE("a forked child finds the numbers of the parent's other threads free",
          "[thread_number]") {
  // The parent's threads hold the memory stores' lowest numbers; this thread
  // holds none of them, and asks for its first only in the child.
  std::atomic<bool> release{false};
  std::atomic<int> holding{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      (void)ThreadNumber(kMemory);
      holding.fetch_add(1);
      while (!release.load()) std::this_thread::yield();  // until the fork is done
    });
  }
  while (holding.load() < 4) std::this_thread::yield();
  const pid_t child = fork();
  if (child == 0) {
    // Only this thread exists here, so every number is free: it takes 0.
    // Reported by exit status (no Catch2 here, nor new threads: see TSan).
    _exit(ThreadNumber(kMemory) == 0 ? 0 : 1);
  }
  release = true;
  for (std::thread& thread : threads) thread.join();
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
