// AdminCommand: a text command sent to every server of a pool (flush_all, stats,
// version), and the reader that collects each server's answer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/net/batch_runner.h"
#include "text_parser.h"

namespace cachet::memcached {

// Sends `request` (the command's line, borrowed) to one server and reads its
// answer: STAT lines up to END for "stats", a VERSION line for "version", OK
// for anything else (flush_all). Another reply is protocol_error; an error line
// is the outcome; either drops the connection. The caller reads the exchange's
// status from the runner and the answer from outcome() and lines().
class AdminReplyReader final : public net::ServerBatch {
 public:
  AdminReplyReader(std::string_view command, std::string_view request, ParserLimits limits)
      : expect_(command == "stats"     ? Expect::kStats
                : command == "version" ? Expect::kVersion
                                       : Expect::kOk),
        request_(request),
        parser_(limits) {}

  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }
  Status Consume(net::ReadBuffer& buffer) override;
  bool done() const noexcept override { return done_; }
  void Settle(const Status&) override {}
  bool poisoned() const noexcept override { return poisoned_; }

  // The outcome: ok, or the server's error.
  const Status& outcome() const noexcept { return outcome_; }
  // STAT name/value pairs, or the one line's text (VERSION's version).
  const std::vector<std::pair<std::string, std::string>>& lines() const noexcept { return lines_; }

 private:
  Status OnReply(const Reply& reply);

  enum class Expect : std::uint8_t { kStats, kVersion, kOk };

  Expect expect_;
  std::string_view request_;
  TextReplyParser parser_;
  bool done_ = false;
  bool poisoned_ = false;
  Status outcome_;
  std::vector<std::pair<std::string, std::string>> lines_;
};

}  // namespace cachet::memcached
