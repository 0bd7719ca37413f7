// ThreadNumber: a small number for the calling thread, for per-thread slots.
//
// A thread gets the lowest number no live thread holds when it first asks, and
// gives it back when it ends. So N live threads hold N different numbers,
// however many threads came and went before them, and a slot table of N
// entries indexed by number gives each its own. Each kind of slot table has a
// numbering of its own (ThreadNumbering), so threads that never use one kind
// take none of its numbers. Past 1024 live threads numbers are handed out once
// and not reused. A thread's thread-local destructors that run after its numbers
// were given back read kGivenBackNumber, which no thread holds and which is past
// every table's own slots: a table whose slot has one writer (the memory store's)
// treats numbers past its size as sharers; others may share slots anyway (a
// number modulo their size). The Cache's metrics stripes keep their own rule:
// a stripe needs one writer, so a thread beyond them gets none.
#pragma once

#include <array>
#include <cstddef>

#include "cachet/export.h"

namespace cachet {

enum class ThreadNumbering : std::size_t {
  kConnectionPools,  // net::ServerPool's spare connection slots
  kMemoryStores,     // the memory store's reader slots and writer lanes
};
inline constexpr std::size_t kThreadNumberings = 2;

// The number of a thread whose numbers were given back (it is ending).
inline constexpr std::size_t kGivenBackNumber = ~std::size_t{0} - 1;

namespace detail {
// The calling thread's number in each numbering plus one; 0 until it first
// asks. Constant initialised, so reading it needs no guard; initial-exec, so
// reading it, from libcachet or a plugin, is one load: libcachet is loaded with
// the program, where static TLS is reserved for it.
CACHET_EXPORT extern thread_local constinit std::array<std::size_t, kThreadNumberings>
    thread_numbers_plus_one __attribute__((tls_model("initial-exec")));
// Numbers the calling thread in `numbering` on its first ask, and returns it.
CACHET_EXPORT std::size_t NumberThisThread(ThreadNumbering numbering) noexcept;
}  // namespace detail

// The calling thread's number in `numbering`.
inline std::size_t ThreadNumber(ThreadNumbering numbering) noexcept {
  const std::size_t number = detail::thread_numbers_plus_one[static_cast<std::size_t>(numbering)];
  if (number == 0) [[unlikely]]
    return detail::NumberThisThread(numbering);
  return number - 1;
}

}  // namespace cachet
