// CAS tokens derived from a value's SHA-1; see cas_token.h.
#include "cas_token.h"

#include "sha1.h"

namespace cachet::redis {

std::uint64_t CasTokenOf(std::string_view value) {
  const Sha1Digest digest = Sha1(value);
  std::uint64_t token = 0;
  for (int i = 0; i < 8; ++i) token = (token << 8) | digest[i];
  return token == 0 ? 1 : token;
}

CasTokenText::CasTokenText(std::uint64_t token) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i, token >>= 4) digits_[i] = kHexDigits[token & 0x0f];
}

}  // namespace cachet::redis
