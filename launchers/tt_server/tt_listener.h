// TtListener: accepts connections on 127.0.0.1 and serves each on its own thread.
//
// Run() returns once `stop` becomes true (checked at least every 100 ms): it
// shuts down every open connection, joins their threads and returns, so the
// store can then be closed safely. Only loopback is ever bound.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include "tt_store.h"

namespace cachet::ttserver {

class TtListener {
 public:
  // `store` must outlive the listener.
  explicit TtListener(TtStore& store) : store_(store) {}
  ~TtListener();
  TtListener(const TtListener&) = delete;
  TtListener& operator=(const TtListener&) = delete;

  // Binds 127.0.0.1:`port` (0: any free port). False with `*error` set on failure.
  bool Listen(int port, std::string* error);
  // The bound port, after Listen().
  int port() const { return port_; }

  void Run(const std::atomic<bool>& stop);

 private:
  struct Connection {
    int fd = -1;
    std::atomic<bool> finished{false};
    std::thread thread;
  };

  void Accept();
  // Joins the threads of connections whose peers have gone.
  void ReapFinished();
  void CloseAll();

  TtStore& store_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::list<Connection> connections_;  // a list: elements never move while threads run
};

}  // namespace cachet::ttserver
