// KilledWhilePaused: a server that crashes while a call waits on it. It is
// paused at once (it takes what comes into its socket but answers nothing) and
// killed `after` that, on a thread of its own; Join() (or the destructor)
// waits for the kill.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "launchers/server_process.h"

namespace cachet::test {

class KilledWhilePaused {
 public:
  // `server` must outlive this object.
  KilledWhilePaused(ServerProcess& server, std::chrono::milliseconds after) {
    REQUIRE(server.Pause().ok());
    killer_ = std::thread([&server, after] {
      std::this_thread::sleep_for(after);
      (void)server.Kill();
    });
  }
  ~KilledWhilePaused() { Join(); }
  KilledWhilePaused(const KilledWhilePaused&) = delete;
  KilledWhilePaused& operator=(const KilledWhilePaused&) = delete;

  void Join() {
    if (killer_.joinable()) killer_.join();
  }

 private:
  std::thread killer_;
};

}  // namespace cachet::test
