// The benchmark's values.
#include "payloads.h"

namespace cachet::bench {
namespace {

constexpr std::size_t kDocumentFields = 20;
constexpr std::size_t kCompressibleSize = 100 * 1024;
constexpr std::size_t kSizeStep = 128 * 1024;
constexpr std::size_t kSizeSteps = 5;  // 0, 128K, 256K, 384K, 512K

// Like the seeds' Storable hash: short names, a mix of numbers and strings.
Json MakeDocument() {
  Json doc = Json::object();
  for (std::size_t i = 0; i < kDocumentFields; ++i) {
    const std::string name = "field" + std::to_string(i);
    if (i % 2 == 0) {
      doc[name] = static_cast<std::int64_t>(i * 1000 + 7);
    } else {
      doc[name] = MakeRandomText(12, static_cast<std::uint32_t>(i + 1));
    }
  }
  return doc;
}

// Words drawn from a small vocabulary: text that compresses several times over,
// as HTML fragments or JSON documents do.
std::string MakeCompressible(std::size_t size) {
  static constexpr const char* kWords[] = {"cache ", "value ",  "server ", "key ", "memory ",
                                           "redis ", "tyrant ", "get ",    "set ", "bench "};
  std::string text;
  text.reserve(size + 8);
  std::uint32_t state = 88172645u;
  while (text.size() < size) {
    state = state * 1664525u + 1013904223u;
    text += kWords[(state >> 16) % 10];
  }
  text.resize(size);
  return text;
}

}  // namespace

std::string MakeRandomText(std::size_t size, std::uint32_t seed) {
  std::string text(size, ' ');
  std::uint32_t state = 2463534242u ^ seed;
  for (char& c : text) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    c = static_cast<char>('!' + state % 94);
  }
  return text;
}

Payloads MakePayloads(std::size_t value_size) {
  Payloads p;
  p.value = MakeRandomText(value_size, 0);
  p.document = MakeDocument();
  p.compressible = MakeCompressible(kCompressibleSize);
  for (std::size_t i = 0; i < kSizeSteps; ++i) {
    p.sized.push_back(MakeRandomText(i * kSizeStep, static_cast<std::uint32_t>(i)));
  }
  return p;
}

}  // namespace cachet::bench
