// Server tracing: the per-thread note of the server a call used.
#include "cachet/net/server_trace.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace cachet::net {

std::atomic<int> server_trace_users{0};

namespace {

struct ServerNote {
  bool tracing = false;
  bool several = false;
  NotedServerText server;  // size 0: none yet
};

constinit thread_local ServerNote this_thread_note;

// "host:port" of `address` into `out`, the host cut short if it does not fit.
void Format(const ServerAddress& address, NotedServerText* out) noexcept {
  if (address.IsUnix()) {  // "unix:/path", no port
    out->size = std::min(address.host.size(), NotedServerText::kCapacity);
    std::memcpy(out->text, address.host.data(), out->size);
    return;
  }
  constexpr std::size_t kPortRoom = 6;  // ':' and up to five digits
  const std::size_t host = std::min(address.host.size(), NotedServerText::kCapacity - kPortRoom);
  std::memcpy(out->text, address.host.data(), host);
  out->text[host] = ':';
  char* end = out->text + NotedServerText::kCapacity;
  const auto [ptr, ec] = std::to_chars(out->text + host + 1, end, address.port);
  out->size = ec == std::errc{} ? static_cast<std::size_t>(ptr - out->text) : host;
}

}  // namespace

void BeginServerTrace() noexcept {
  ServerNote& note = this_thread_note;
  note.tracing = true;
  note.several = false;
  note.server.size = 0;
}

void NoteServer(const ServerAddress& server) noexcept {
  ServerNote& note = this_thread_note;
  if (!note.tracing || note.several) return;
  if (note.server.size == 0) {
    Format(server, &note.server);
    return;
  }
  NotedServerText text;
  Format(server, &text);
  if (text.view() != note.server.view()) note.several = true;
}

NotedServerText EndServerTrace() noexcept {
  ServerNote& note = this_thread_note;
  note.tracing = false;
  if (!note.several) return note.server;
  NotedServerText several;
  constexpr std::string_view kSeveral = "(several)";
  std::memcpy(several.text, kSeveral.data(), kSeveral.size());
  several.size = kSeveral.size();
  return several;
}

bool ServerTraceActive() noexcept { return this_thread_note.tracing; }

}  // namespace cachet::net
