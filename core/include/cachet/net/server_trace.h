// Server tracing: which server a Cache call exchanged with, for CacheObserver.
//
// While at least one Cache in the process has an observer, ServerPool::Report
// notes on the calling thread the server of every exchange it is told of; the
// Cache clears the note when a call begins and reads it when the call ends. With
// no observer anywhere, Report only reads one global counter. The note is per
// thread, so it needs no lock.
#pragma once

#include <atomic>
#include <string>

#include "cachet/export.h"
#include "cachet/net/endpoint.h"

namespace cachet::net {

// How many observers are registered in the process; tracing is on while > 0.
CACHET_EXPORT extern std::atomic<int> server_trace_users;

inline bool ServerTraceOn() noexcept {
  return server_trace_users.load(std::memory_order_relaxed) > 0;
}

// Notes that this thread's current call exchanged with `server`. The address
// must outlive the call (a pool's addresses live as long as the pool).
CACHET_EXPORT void NoteServer(const ServerAddress& server) noexcept;
// Forgets this thread's note, at the start of a call.
CACHET_EXPORT void ClearServerNote() noexcept;
// "host:port" of the noted server, "(several)" when a call used more than one,
// "" when it used none.
CACHET_EXPORT std::string NotedServer();

}  // namespace cachet::net
