// The numbers of live threads: the lowest free one to a thread on its first
// ask, back when it ends.
#include "cachet/thread_number.h"

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace cachet {

namespace {

// Which numbers live threads hold. Lock-free and allocation-free, so a fork or
// an exit never finds it half-changed.
class NumbersInUse {
 public:
  std::size_t Take() noexcept {
    for (std::size_t word = 0; word < kWords; ++word) {
      std::uint64_t bits = used_[word].load();
      while (bits != ~std::uint64_t{0}) {
        const int bit = std::countr_one(bits);
        if (used_[word].compare_exchange_weak(bits, bits | (std::uint64_t{1} << bit))) {
          return word * 64 + static_cast<std::size_t>(bit);
        }
      }
    }
    return kTracked + beyond_.fetch_add(1, std::memory_order_relaxed);
  }
  void Give(std::size_t number) noexcept {
    if (number < kTracked) used_[number / 64].fetch_and(~(std::uint64_t{1} << (number % 64)));
  }

 private:
  static constexpr std::size_t kWords = 16;
  static constexpr std::size_t kTracked = kWords * 64;
  std::array<std::atomic<std::uint64_t>, kWords> used_{};
  std::atomic<std::size_t> beyond_{0};
};

NumbersInUse& Numbers() noexcept {
  static NumbersInUse numbers;
  return numbers;
}

// Gives the thread's number back when the thread ends. A destructor of another
// thread_local that runs later still reads the old number: two threads then
// share a slot for a moment, which every slot table allows.
struct GiveBackAtExit {
  std::size_t number;
  ~GiveBackAtExit() { Numbers().Give(number); }
};

}  // namespace

namespace detail {

[[gnu::tls_model("initial-exec")]] thread_local constinit std::size_t thread_number_plus_one = 0;

std::size_t NumberThisThread() noexcept {
  const std::size_t number = Numbers().Take();
  thread_local GiveBackAtExit give_back{number};
  give_back.number = number;
  thread_number_plus_one = number + 1;
  return number;
}

}  // namespace detail

}  // namespace cachet
