// The test server's answer to stat: "name\tvalue\n" lines, as ttserver writes them.
#pragma once

#include <string>

#include "tt_store.h"

namespace cachet::ttserver {

// version, libver, protver, os, time, pid, path, rnum, size, bigend.
std::string StatText(TtStore& store);

}  // namespace cachet::ttserver
