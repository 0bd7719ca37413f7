// cachet-ttserver: a Tokyo Tyrant test server over Tokyo Cabinet, for cachet's tests.
//
//   cachet-ttserver [--port N] [--db NAME]
//
// Listens on 127.0.0.1 only. --port 0 (the default) picks a free port. Once
// listening it prints "port N" on a line of its own on stdout, so a launcher can
// read where it is. --db takes a tcadbopen name: "*" (on-memory hash, the
// default), "+" (on-memory tree) or a database file. SIGTERM or SIGINT stops it:
// open connections are closed and the database is closed cleanly.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tt_listener.h"
#include "tt_store.h"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

struct Options {
  int port = 0;
  std::string db = "*";
};

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    if (arg == "--port") {
      char* end = nullptr;
      const long port = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || port < 0 || port > 65535) return false;
      options->port = static_cast<int>(port);
    } else if (arg == "--db") {
      options->db = argv[++i];
    } else {
      return false;
    }
  }
  return true;
}

void InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr, "usage: %s [--port N] [--db NAME]\n", argv[0]);
    return 2;
  }
  InstallSignalHandlers();
  std::string error;
  auto store = cachet::ttserver::TtStore::Open(options.db, &error);
  if (!store) {
    std::fprintf(stderr, "cachet-ttserver: %s\n", error.c_str());
    return 1;
  }
  cachet::ttserver::TtListener listener(*store);
  if (!listener.Listen(options.port, &error)) {
    std::fprintf(stderr, "cachet-ttserver: %s\n", error.c_str());
    return 1;
  }
  std::printf("port %d\n", listener.port());
  std::fflush(stdout);
  listener.Run(g_stop);
  return 0;
}
