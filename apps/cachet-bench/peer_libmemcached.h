// The libmemcached peer: the Client interface on a memcached_st.
#pragma once

#include <memory>
#include <string>

#include "cachet/result.h"
#include "client.h"

namespace cachet::bench {

// Connects to "host:port" (text protocol and TCP_NODELAY, as cachet's default).
Result<std::unique_ptr<Client>> ConnectLibmemcached(const std::string& server);

}  // namespace cachet::bench
