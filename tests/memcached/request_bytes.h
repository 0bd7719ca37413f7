// The bytes a request builder holds, gathered into one string (tests).
#pragma once

#include <sys/uio.h>

#include <string>
#include <vector>

#include "cachet/net/request_buffer.h"
#include "command_line.h"

namespace cachet::memcached {

inline std::string Flatten(const net::RequestBuffer& buffer) {
  std::vector<iovec> iovs;
  buffer.Iovecs(&iovs);
  std::string out;
  for (const iovec& v : iovs) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

inline std::string Flatten(CommandLine& line) {
  iovec pieces[3];
  const int count = line.Iovecs(pieces);
  std::string out;
  for (int i = 0; i < count; ++i) {
    out.append(static_cast<const char*>(pieces[i].iov_base), pieces[i].iov_len);
  }
  return out;
}

}  // namespace cachet::memcached
