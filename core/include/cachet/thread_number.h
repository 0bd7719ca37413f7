// ThreadNumber: a small number for the calling thread, for per-thread slots
// (a connection pool's spare slots, the memory store's reader slots and
// writer lanes).
//
// A thread gets the lowest number no live thread holds when it first asks, and
// gives it back when it ends. So N live threads hold N different numbers,
// however many threads came and went before them, and a slot table of N
// entries indexed by number gives each its own. Past 1024 live threads numbers
// are handed out once and not reused; slot tables must cope with two threads
// on one slot anyway (a number modulo their size).
#pragma once

#include <cstddef>

#include "cachet/export.h"

namespace cachet {

namespace detail {
// The calling thread's number plus one; 0 until it first asks. Constant
// initialised, so reading it needs no guard; initial-exec, so reading it,
// from libcachet or a plugin, is one load: libcachet is loaded with the
// program, where static TLS is reserved for it.
CACHET_EXPORT extern thread_local constinit std::size_t thread_number_plus_one
    __attribute__((tls_model("initial-exec")));
// Numbers the calling thread on its first ask, and returns its number.
CACHET_EXPORT std::size_t NumberThisThread() noexcept;
}  // namespace detail

// The calling thread's number.
inline std::size_t ThreadNumber() noexcept {
  const std::size_t number = detail::thread_number_plus_one;
  if (number == 0) [[unlikely]]
    return detail::NumberThisThread();
  return number - 1;
}

}  // namespace cachet
