// The values scenarios write, made once per run so every column stores the very
// same bytes: the plain value (--value-size), a Json map of 20 fields, a 100 KB
// compressible text, and the values of the sizes scenario (0 to 512 KB).
#pragma once

#include <string>
#include <vector>

#include "cachet/codec.h"

namespace cachet::bench {

struct Payloads {
  std::string value;
  Json document;
  std::string compressible;
  std::vector<std::string> sized;
};

Payloads MakePayloads(std::size_t value_size);

// Printable bytes from a fixed-seed generator: reproducible, and not a run of one
// character that a compressor would shrink to nothing.
std::string MakeRandomText(std::size_t size, std::uint32_t seed);

}  // namespace cachet::bench
