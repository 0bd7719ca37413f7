// MemcachedServer: a memcached started for a test (see server_process.h).
//
// memcached -l 127.0.0.1 -p PORT -U 0 -m 64 -t 2, plus `-u root` when the tests
// run as root (memcached refuses root otherwise), plus any extra arguments.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "launchers/server_process.h"

namespace cachet::test {

// Starts a memcached; `extra_args` are appended (for example {"-I", "2m"}).
Result<std::unique_ptr<ServerProcess>> StartMemcached(std::vector<std::string> extra_args = {});

// True when a memcached binary is on PATH (tests skip themselves otherwise).
bool HaveMemcached();

}  // namespace cachet::test
