// LookUpAddresses: numeric addresses at once, names on a thread bounded by the deadline.
#include "name_lookup.h"

#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace cachet::net {

namespace {

LookupResult Resolve(const std::string& host, const std::string& port, int flags) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | flags;
  addrinfo* found = nullptr;
  LookupResult result;
  result.error = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  result.addresses.reset(result.error == 0 ? found : nullptr);
  return result;
}

// What the lookup thread and its waiter share; the last of them frees it.
struct PendingLookup {
  std::mutex mutex;
  std::condition_variable answered;
  bool done = false;
  LookupResult result;
};

}  // namespace

LookupResult LookUpAddresses(const std::string& host, std::uint16_t port, Deadline deadline) {
  const std::string service = std::to_string(port);
  LookupResult numeric = Resolve(host, service, AI_NUMERICHOST);
  if (numeric.error != EAI_NONAME) return numeric;

  auto pending = std::make_shared<PendingLookup>();
  try {
    std::thread([pending, host, service] {
      LookupResult found = Resolve(host, service, 0);
      std::lock_guard<std::mutex> lock(pending->mutex);
      pending->result = std::move(found);
      pending->done = true;
      pending->answered.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    LookupResult failed;
    failed.error = EAI_AGAIN;  // no thread to look it up on: a temporary failure
    return failed;
  }
  std::unique_lock<std::mutex> lock(pending->mutex);
  if (!pending->answered.wait_until(lock, deadline, [&] { return pending->done; })) {
    LookupResult late;
    late.timed_out = true;
    return late;
  }
  return std::move(pending->result);
}

}  // namespace cachet::net
