// Server tracing: the per-thread note of the server a call used.
#include "cachet/net/server_trace.h"

namespace cachet::net {

std::atomic<int> server_trace_users{0};

namespace {

struct ServerNote {
  const ServerAddress* server = nullptr;
  bool several = false;
};

thread_local ServerNote this_thread_note;

}  // namespace

void NoteServer(const ServerAddress& server) noexcept {
  ServerNote& note = this_thread_note;
  if (note.server == nullptr) {
    note.server = &server;
  } else if (note.server != &server && !(*note.server == server)) {
    note.several = true;
  }
}

void ClearServerNote() noexcept { this_thread_note = ServerNote{}; }

std::string NotedServer() {
  const ServerNote& note = this_thread_note;
  if (note.several) return "(several)";
  return note.server == nullptr ? std::string() : note.server->HostPort();
}

}  // namespace cachet::net
