// AdminCommand: a text command sent to every server of a pool (flush_all, stats,
// version), and the reader that collects each server's answer.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/net/fan_out.h"
#include "text_parser.h"

namespace cachet::memcached {

// Reads one server's answer: lines up to END for "stats", one line otherwise.
class AdminReplyReader final : public net::ReplyReader {
 public:
  AdminReplyReader(std::string_view command, ParserLimits limits)
      : multi_line_(command == "stats"), parser_(limits) {}

  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return done_; }

  // The outcome: ok, or the server's error.
  const Status& outcome() const noexcept { return outcome_; }
  // STAT name/value pairs, or the one line's text (VERSION's version).
  const std::vector<std::pair<std::string, std::string>>& lines() const noexcept { return lines_; }

 private:
  Status OnReply(const Reply& reply);

  bool multi_line_;
  TextReplyParser parser_;
  bool done_ = false;
  Status outcome_;
  std::vector<std::pair<std::string, std::string>> lines_;
};

}  // namespace cachet::memcached
