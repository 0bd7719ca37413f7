// LineReader: a net::ReplyReader of one "\r\n"-ended line, for tests that talk
// to a server (memcached's `version`, a fake's one-line answer) through the engine.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cachet/net/exchange.h"
#include "cachet/net/read_buffer.h"
#include "cachet/status.h"

namespace cachet::test {

class LineReader : public net::ReplyReader {
 public:
  Status Consume(net::ReadBuffer& buffer) override {
    const std::size_t end = buffer.data().find("\r\n");
    if (end == std::string_view::npos) return Status::OK();
    line = std::string(buffer.data().substr(0, end));
    buffer.Consume(end + 2);
    done_ = true;
    return Status::OK();
  }
  bool done() const noexcept override { return done_; }
  std::string line;  // without its "\r\n"

 private:
  bool done_ = false;
};

}  // namespace cachet::test
