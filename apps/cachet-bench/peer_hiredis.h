// The hiredis peer: the Client interface on a redisContext.
#pragma once

#include <memory>
#include <string>

#include "cachet/result.h"
#include "client.h"

namespace cachet::bench {

Result<std::unique_ptr<Client>> ConnectHiredis(const std::string& server);

}  // namespace cachet::bench
