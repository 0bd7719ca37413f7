// Attempts: the count and pace of a call's retries (see retry.h).
#include "cachet/net/retry.h"

#include <algorithm>
#include <string>
#include <thread>

namespace cachet::net {

bool Attempts::Next() {
  if (made_ >= policy_.limit()) return false;
  if (Clock::now() >= deadline_) return false;
  ++made_;
  return true;
}

void Attempts::Wait() const {
  if (made_ >= policy_.limit()) return;  // none will follow
  const auto wait = policy_.wait * std::min(std::max<std::uint32_t>(made_, 1),
                                            RetryPolicy::kMaxWaitFactor);
  std::this_thread::sleep_until(std::min(Clock::now() + wait, deadline_));
}

Status Attempts::GiveUp(std::string_view what, const Status& last) const {
  const std::string tries = std::to_string(made_) + (made_ == 1 ? " attempt" : " attempts");
  if (Clock::now() >= deadline_) {
    return Status::Timeout(std::string(what) + ": no answer within the request timeout after " +
                           tries + "; last: " + last.ToString());
  }
  return Status::Unavailable(std::string(what) + ": gave up after " + tries +
                             "; last: " + last.ToString());
}

}  // namespace cachet::net
