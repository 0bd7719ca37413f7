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

// `count` threads, each holding its number in `numbering` until this ends;
// the constructor returns once every one has its number.
class HoldingThreads {
 public:
  HoldingThreads(std::size_t count, ThreadNumbering numbering) : numbers_(count) {
    for (std::size_t t = 0; t < count; ++t) {
      threads_.emplace_back([this, t, numbering] {
        numbers_[t] = ThreadNumber(numbering);
        numbered_.fetch_add(1);
        while (!release_.load()) std::this_thread::yield();  // until the destructor
      });
    }
    while (numbered_.load() < count) std::this_thread::yield();  // each numbers itself at once
  }
  ~HoldingThreads() {
    release_ = true;
    for (std::thread& thread : threads_) thread.join();
  }
  const std::vector<std::size_t>& numbers() const { return numbers_; }

 private:
  std::vector<std::size_t> numbers_;
  std::atomic<std::size_t> numbered_{0};
  std::atomic<bool> release_{false};
  std::vector<std::thread> threads_;
};

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
  { HoldingThreads came_and_went(20, kPools); }
  constexpr std::size_t kThreads = 16;
  HoldingThreads live(kThreads, kPools);
  const std::set<std::size_t> distinct(live.numbers().begin(), live.numbers().end());
  CHECK(distinct.size() == kThreads);
  CHECK(distinct.count(mine) == 0);
  CHECK(*distinct.rbegin() <= kThreads);
}

TEST_CASE("a numbering counts only the threads that asked it", "[thread_number]") {
  // Eight threads that only ever ask the memory stores' numbering...
  HoldingThreads memory_only(8, kMemory);
  // ...leave the pools' numbers to the threads that use pools.
  const std::size_t mine = ThreadNumber(kPools);
  HoldingThreads pools(8, kPools);
  std::set<std::size_t> distinct(pools.numbers().begin(), pools.numbers().end());
  distinct.insert(mine);
  CHECK(distinct.size() == 9);
  CHECK(*distinct.rbegin() <= 8);
}

namespace {
// Calls ThreadNumber from a thread_local destructor that runs after the
// thread gave its number back.
struct AsksAtExit {
  std::size_t* seen = nullptr;
  cachet::ThreadNumbering numbering = kPools;
  ~AsksAtExit() {
    if (seen != nullptr) *seen = ThreadNumber(numbering);
  }
};
}  // namespace

TEST_CASE("a thread_local destructor that runs after the give-back reads no live number",
          "[thread_number]") {
  std::size_t number = 0;
  std::size_t seen_at_exit = 0;
  std::thread([&] {
    // Constructed before the first ask, so destroyed after the give-back:
    // another thread may hold the old number by then.
    thread_local AsksAtExit asks;
    asks.seen = &seen_at_exit;
    number = ThreadNumber(kPools);
  }).join();
  CHECK(seen_at_exit == cachet::kGivenBackNumber);
  CHECK(number != cachet::kGivenBackNumber);
}

TEST_CASE("a late thread_local destructor asking in a new numbering takes no number",
          "[thread_number]") {
  // The thread asked for a pool number only; a first ask for a memory-store
  // number after the give-back would take one that nothing gives back.
  std::size_t before = 0;
  std::thread([&] { before = ThreadNumber(kMemory); }).join();  // the lowest free one
  std::size_t seen_at_exit = 0;
  std::thread([&] {
    thread_local AsksAtExit asks;
    asks.seen = &seen_at_exit;
    asks.numbering = kMemory;
    (void)ThreadNumber(kPools);
  }).join();
  CHECK(seen_at_exit == cachet::kGivenBackNumber);
  // The lowest free memory-store number is still free: not taken and kept.
  std::size_t after = 0;
  std::thread([&] { after = ThreadNumber(kMemory); }).join();
  CHECK(after == before);
}

TEST_CASE("a forked child finds the numbers of the parent's other threads free",
          "[thread_number]") {
  // The parent's threads hold the memory stores' lowest numbers; this thread
  // holds none of them, and asks for its first only in the child.
  pid_t child = -1;
  {
    HoldingThreads parents(4, kMemory);
    child = fork();
    if (child == 0) {
      // Only this thread exists here, so every number is free: it takes 0.
      // Reported by exit status (no Catch2 here, nor new threads: see TSan).
      _exit(ThreadNumber(kMemory) == 0 ? 0 : 1);
    }
  }
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
