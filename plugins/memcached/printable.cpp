// Printable: quoting untrusted bytes for messages.
#include "printable.h"

namespace cachet::memcached {

std::string Printable(std::string_view bytes, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes.substr(0, max_bytes)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  if (bytes.size() > max_bytes) out += "...";
  return out;
}

}  // namespace cachet::memcached
