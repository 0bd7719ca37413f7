// Server tracing: which server a Cache call exchanged with, for CacheObserver.
//
// A call on a Cache with an observer begins a trace on its thread; while it is
// on, ServerPool::Report notes the "host:port" of every server it is told of;
// the call ends the trace and reads the note. The note is a copy of the text in
// a per-thread buffer, never a pointer into a pool, so a pool destroyed later
// cannot leave it dangling; reports outside a trace (calls on unobserved
// Caches) note nothing. With no observer anywhere, Report only reads one global
// counter. The note is per thread, so it needs no lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <string_view>

#include "cachet/export.h"
#include "cachet/net/endpoint.h"

namespace cachet::net {

// How many observers are registered in the process; Report looks at the
// thread's trace only while > 0.
CACHET_EXPORT extern std::atomic<int> server_trace_users;

inline bool ServerTraceOn() noexcept {
  return server_trace_users.load(std::memory_order_relaxed) > 0;
}

// The noted server of a finished trace: "host:port", "(several)" when the call
// used more than one, "" when it used none. A host too long for the buffer
// (longer than any DNS name) is cut short.
struct NotedServerText {
  static constexpr std::size_t kCapacity = 272;
  char text[kCapacity]{};
  std::size_t size = 0;
  std::string_view view() const noexcept { return {text, size}; }
};

// Starts this thread's trace with an empty note.
CACHET_EXPORT void BeginServerTrace() noexcept;
// Notes that this thread's traced call exchanged with `server`; nothing when no
// trace is on.
CACHET_EXPORT void NoteServer(const ServerAddress& server) noexcept;
// Ends this thread's trace and returns its note. The note is kept until the
// next BeginServerTrace, so a call timed around another (GetOrCompute around
// its load) can read it too.
CACHET_EXPORT NotedServerText EndServerTrace() noexcept;
// Whether this thread's trace is on (for tests).
CACHET_EXPORT bool ServerTraceActive() noexcept;

}  // namespace cachet::net
