// AdminCommand: a text command sent to every server of a pool (flush_all, stats,
// version), and the reader that collects each server's answer.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/net/batch_runner.h"
#include "text_parser.h"

namespace cachet::memcached {

// Sends `request` (the command's line, borrowed) to one server and reads its
// answer: lines up to END for "stats", one line otherwise. The caller reads the
// exchange's status from the runner and the answer from outcome() and lines().
class AdminReplyReader final : public net::ServerBatch {
 public:
  AdminReplyReader(std::string_view command, std::string_view request, ParserLimits limits)
      : multi_line_(command == "stats"), request_(request), parser_(limits) {}

  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }
  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return done_; }
  void Settle(const Status&) override {}

  // The outcome: ok, or the server's error.
  const Status& outcome() const noexcept { return outcome_; }
  // STAT name/value pairs, or the one line's text (VERSION's version).
  const std::vector<std::pair<std::string, std::string>>& lines() const noexcept { return lines_; }

 private:
  Status OnReply(const Reply& reply);

  bool multi_line_;
  std::string_view request_;
  TextReplyParser parser_;
  bool done_ = false;
  Status outcome_;
  std::vector<std::pair<std::string, std::string>> lines_;
};

}  // namespace cachet::memcached
