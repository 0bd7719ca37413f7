// Text protocol request encoding: the one encoder that is not a template.
#include "text_request.h"

#include <cstring>

namespace cachet::memcached {

void AppendTextKeys(RequestBuffer& out, std::span<Operation* const> ops, std::string& scratch) {
  std::size_t size = 0;
  for (const Operation* op : ops) size += 1 + op->key.size();
  scratch.resize(size);
  char* at = scratch.data();
  for (const Operation* op : ops) {
    *at++ = ' ';
    std::memcpy(at, op->key.data(), op->key.size());
    at += op->key.size();
  }
  out.Append(scratch);
}

}  // namespace cachet::memcached
