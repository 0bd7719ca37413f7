// CallServer's rare step: connecting a connection, and logging it in, on its own.
#include "cachet/net/lone_call.h"

#include <memory>

#include "cachet/net/exchange.h"

namespace cachet::net {

Status ConnectAlone(Connection& connection, const ConnectionSetup* setup, Deadline deadline) {
  if (Status s = connection.EnsureConnected(deadline); !s.ok()) return s;
  if (setup == nullptr) return Status::OK();
  std::unique_ptr<Login> login = setup->NewLogin(connection);
  if (!login) return Status::OK();
  int count = 0;
  iovec* request = login->Request(&count);
  // Any failure of the login's exchange (a refused password) has closed the connection.
  return RunLoneExchange(connection, request, count, *login, Clock::now(), deadline);
}

}  // namespace cachet::net
