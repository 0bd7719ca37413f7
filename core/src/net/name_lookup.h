// LookUpAddresses: a host's addresses, found before a deadline.
//
// getaddrinfo() cannot be told when to give up: a resolver that does not answer
// holds it for its own timeouts and retries (seconds), past any call's deadline.
// A numeric address needs no resolver and is answered at once; a name is looked
// up on a thread of its own, which the caller stops waiting for at the deadline
// (the thread then finishes alone and frees what it found).
#pragma once

#include <netdb.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cachet/net/connection.h"

namespace cachet::net {

struct FreeAddresses {
  void operator()(addrinfo* list) const noexcept {
    if (list != nullptr) freeaddrinfo(list);
  }
};
using AddressList = std::unique_ptr<addrinfo, FreeAddresses>;

struct LookupResult {
  AddressList addresses;  // null unless found
  int error = 0;          // getaddrinfo()'s error (EAI_*), 0 when found
  bool timed_out = false;  // no answer before the deadline
};

// The stream addresses of `host` (no brackets around an IPv6 address) and `port`.
LookupResult LookUpAddresses(const std::string& host, std::uint16_t port, Deadline deadline);

}  // namespace cachet::net
