// TtSession: one client connection of the test server, speaking Tokyo Tyrant's
// binary protocol as ttserver 1.1.41 does (docs/tokyotyrant.md).
//
// Requests are read one after another and answered in order. putnr answers
// nothing. A request with a negative or over-limit size (256 MiB) or item count
// (1,048,576) gets no reply, as with ttserver, and the session then drops the
// connection rather than read the rest out of step. An unknown magic or command
// byte drops it too. The differences from ttserver are deliberate and few: copy
// refuses '@' paths (ttserver would run a shell command), and restore, setmst
// and ext answer failure (no update log, replication or Lua here).
#pragma once

#include <cstdint>
#include <string>

#include "socket_stream.h"
#include "tt_store.h"

namespace cachet::ttserver {

class TtSession {
 public:
  // `store` must outlive the session; `fd` is the connected socket (not owned).
  TtSession(int fd, TtStore& store);

  // Serves requests until the peer closes, breaks the protocol, or the socket fails.
  void Run();

 private:
  // Each handler reads the rest of its request and writes its reply; false drops
  // the connection.
  bool Dispatch(std::uint8_t command);
  bool HandleStore(std::uint8_t command);
  bool HandlePutShl();
  bool HandleOut();
  bool HandleGet();
  bool HandleMget();
  bool HandleVsiz();
  bool HandleIterInit();
  bool HandleIterNext();
  bool HandleFwmKeys();
  bool HandleAddInt();
  bool HandleAddDouble();
  bool HandleExt();
  bool HandleSync();
  bool HandleOptimize();
  bool HandleVanish();
  bool HandleCopy();
  bool HandleRestore();
  bool HandleSetMaster();
  bool HandleRnum();
  bool HandleSize();
  bool HandleStat();
  bool HandleMisc();

  // A size field: false (drop, no reply) when negative or over 256 MiB.
  bool ReadSize(std::int32_t* size);
  // A size field followed later by its bytes, read in one step.
  bool ReadSizedBytes(std::string* out);
  // An item count: false when negative or over 1,048,576.
  bool ReadCount(std::int32_t* count);
  void ReplyStatus(bool ok) { stream_.WriteByte(ok ? 0 : 1); }

  SocketStream stream_;
  TtStore& store_;
  std::string key_;  // reused request buffers
  std::string value_;
};

}  // namespace cachet::ttserver
