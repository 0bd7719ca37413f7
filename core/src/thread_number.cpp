// The numbers of live threads: the lowest free one to a thread on its first
// ask, back when it ends; a forked child keeps only its own thread's.
#include "cachet/thread_number.h"

#include <pthread.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>
#include <type_traits>

namespace cachet {

namespace {

// Which numbers of one numbering live threads hold. Lock-free, allocation-free
// and without a destructor, so a fork, an exit or a thread ending after static
// destruction never finds it half-changed or gone.
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
  // In a forked child: only `kept` (a number the child's thread holds, or
  // none) stays taken; the parent's other threads do not exist there.
  void KeepOnly(std::size_t kept) noexcept {
    for (std::atomic<std::uint64_t>& word : used_) word.store(0);
    if (kept < kTracked) used_[kept / 64].store(std::uint64_t{1} << (kept % 64));
  }

 private:
  static constexpr std::size_t kWords = 16;
  static constexpr std::size_t kTracked = kWords * 64;
  std::atomic<std::uint64_t> used_[kWords] = {};
  std::atomic<std::size_t> beyond_{0};
};
static_assert(std::is_trivially_destructible_v<NumbersInUse>, "used at thread exit, after statics");

constinit NumbersInUse numbers[kThreadNumberings];

// Gives the thread's numbers back when the thread ends. A destructor of another
// thread_local that runs later reads kGivenBackNumber from then on, not the old
// number, which another thread may hold by then.
struct GiveBackAtExit {
  std::array<std::size_t, kThreadNumberings> plus_one{};
  ~GiveBackAtExit() {
    // Every numbering, asked or not: a late first ask would take a number that
    // nothing gives back (this destructor has run).
    for (std::size_t n = 0; n < kThreadNumberings; ++n) {
      detail::thread_numbers_plus_one[n] = kGivenBackNumber + 1;
      if (plus_one[n] != 0) numbers[n].Give(plus_one[n] - 1);
    }
  }
};

void KeepOnlyThisThreadsNumbers() noexcept {
  for (std::size_t n = 0; n < kThreadNumberings; ++n) {
    numbers[n].KeepOnly(detail::thread_numbers_plus_one[n] - 1);  // none: SIZE_MAX
  }
}

}  // namespace

namespace detail {

[[gnu::tls_model("initial-exec")]] thread_local constinit std::array<std::size_t, kThreadNumberings>
    thread_numbers_plus_one{};

std::size_t NumberThisThread(ThreadNumbering numbering) noexcept {
  static std::once_flag fork_handler;
  std::call_once(fork_handler,
                 [] { pthread_atfork(nullptr, nullptr, &KeepOnlyThisThreadsNumbers); });
  const auto n = static_cast<std::size_t>(numbering);
  const std::size_t number = numbers[n].Take();
  thread_local GiveBackAtExit give_back;
  give_back.plus_one[n] = number + 1;
  thread_numbers_plus_one[n] = number + 1;
  return number;
}

}  // namespace detail

}  // namespace cachet
