// Compressors: none, zlib, gzip and zstd; levels, framing, bounds, bad input.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "cachet/compressor.h"
#include "zstd_frames.h"

using cachet::Compressor;
using cachet::CompressorRegistry;
using cachet::Status;
using cachet::test::ZstdRleFrame;

namespace {

// A bound far above every test value.
constexpr std::size_t kBound = std::size_t{256} << 20;
// A string may hold a little more than it was asked for (the allocator's rounding).
constexpr std::size_t kCapacitySlack = 64;

std::unique_ptr<Compressor> Make(const char* name, int level = 0) {
  auto made = CompressorRegistry::Global().Create(name, level);
  REQUIRE(made.ok());
  return std::move(made).value();
}

// Text-like bytes: compressible, but not trivially.
std::string Sample(std::size_t size) {
  std::mt19937 rng(12345);
  const std::string words[] = {"cache ", "value ", "memcached ", "redis ", "tyrant ", "42 "};
  std::string out;
  while (out.size() < size) out += words[rng() % 6];
  out.resize(size);
  return out;
}

std::string RandomBytes(std::size_t size) {
  std::mt19937 rng(777);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xFF);
  return out;
}

std::string Compressed(const char* name, std::string_view in, int level = 0) {
  std::string out;
  REQUIRE(Make(name, level)->Compress(in, &out).ok());
  return out;
}

const char* const kAll[] = {"none", "zlib", "gzip", "zstd"};
const char* const kReal[] = {"zlib", "gzip", "zstd"};

}  // namespace

TEST_CASE("the built-in compressors have their ids", "[compressor]") {
  auto& registry = CompressorRegistry::Global();
  CHECK(registry.FindById(0)->name() == "none");
  CHECK(registry.FindById(1)->name() == "zlib");
  CHECK(registry.FindById(2)->name() == "gzip");
  CHECK(registry.FindById(3)->name() == "zstd");
  CHECK(registry.FindById(9) == nullptr);
  CHECK(registry.Names().size() >= 4);
}

TEST_CASE("every compressor round-trips small, empty, 1 MiB and random data", "[compressor]") {
  const std::string inputs[] = {"", "x", Sample(1000), Sample(1 << 20), RandomBytes(100000)};
  for (const char* name : kAll) {
    for (const std::string& in : inputs) {
      INFO(name << " with " << in.size() << " bytes");
      const auto c = Make(name);
      std::string packed;
      REQUIRE(c->Compress(in, &packed).ok());
      std::string back = "stale";
      REQUIRE(c->Decompress(packed, kBound, &back).ok());
      CHECK(back == in);
    }
  }
}

TEST_CASE("compression shrinks compressible data", "[compressor]") {
  const std::string in = Sample(1 << 20);
  for (const char* name : kReal) {
    INFO(name);
    CHECK(Compressed(name, in).size() < in.size() / 2);
  }
}

TEST_CASE("the shared decoding instance reads any level's output", "[compressor]") {
  const std::string in = Sample(50000);
  for (const char* name : kReal) {
    INFO(name);
    const auto c = Make(name, 9);
    const Compressor* shared = nullptr;
    for (std::uint8_t id = 1; id <= 3; ++id) {
      if (CompressorRegistry::Global().FindById(id)->name() == name) {
        shared = CompressorRegistry::Global().FindById(id);
      }
    }
    REQUIRE(shared != nullptr);
    std::string packed, back;
    REQUIRE(c->Compress(in, &packed).ok());
    REQUIRE(shared->Decompress(packed, in.size(), &back).ok());
    CHECK(back == in);
  }
}

TEST_CASE("levels are validated and change the output", "[compressor]") {
  auto& registry = CompressorRegistry::Global();
  CHECK(registry.Create("zlib", 1).ok());
  CHECK(registry.Create("zlib", 9).ok());
  CHECK(registry.Create("zlib", 10).status().IsInvalidArgument());
  CHECK(registry.Create("gzip", -1).status().IsInvalidArgument());
  CHECK(registry.Create("zstd", 19).ok());
  CHECK(registry.Create("zstd", -5).ok());  // zstd's fast levels
  CHECK(registry.Create("zstd", 1000).status().IsInvalidArgument());
  CHECK(registry.Create("none", 3).status().IsInvalidArgument());
  Status unknown = registry.Create("lz4").status();
  CHECK(unknown.IsInvalidArgument());
  CHECK(unknown.message().find("zstd") != std::string_view::npos);  // lists the known ones

  const std::string in = Sample(200000);
  CHECK(Compressed("zlib", in, 9).size() < Compressed("zlib", in, 1).size());
  CHECK(Compressed("zstd", in, 19).size() < Compressed("zstd", in, 1).size());
}

TEST_CASE("zlib, gzip and zstd outputs carry their formats' headers", "[compressor]") {
  const std::string in = Sample(1000);
  const std::string zlib = Compressed("zlib", in);
  const std::string gzip = Compressed("gzip", in);
  const std::string zstd = Compressed("zstd", in);
  REQUIRE(zlib.size() > 2);
  CHECK(static_cast<unsigned char>(zlib[0]) == 0x78);  // deflate, 32 KiB window (RFC 1950)
  const unsigned header =
      static_cast<unsigned char>(zlib[0]) * 256u + static_cast<unsigned char>(zlib[1]);
  CHECK(header % 31 == 0);                                     // RFC 1950's check bits
  CHECK(gzip.substr(0, 3) == std::string("\x1F\x8B\x08", 3));  // RFC 1952, deflate
  CHECK(zstd.substr(0, 4) == std::string("\x28\xB5\x2F\xFD", 4));
}

TEST_CASE("garbage input is corruption", "[compressor]") {
  const std::string garbage = "this was never compressed by anything at all";
  for (const char* name : kReal) {
    INFO(name);
    std::string out;
    Status s = Make(name)->Decompress(garbage, kBound, &out);
    CHECK(s.IsCorruption());
    CHECK(s.message().find(name) != std::string_view::npos);
    CHECK(Make(name)->Decompress("", kBound, &out).IsCorruption());
  }
}

TEST_CASE("truncated input is corruption at every cut", "[compressor]") {
  const std::string in = Sample(5000);
  for (const char* name : kReal) {
    const std::string packed = Compressed(name, in);
    const auto c = Make(name);
    for (std::size_t cut = 0; cut < packed.size(); ++cut) {
      INFO(name << " cut at " << cut << " of " << packed.size());
      std::string out;
      CHECK(c->Decompress(std::string_view(packed).substr(0, cut), in.size(), &out).IsCorruption());
    }
  }
}

TEST_CASE("bytes after a complete zlib or gzip stream are corruption", "[compressor]") {
  for (const char* name : {"zlib", "gzip"}) {
    INFO(name);
    std::string out;
    CHECK(Make(name)->Decompress(Compressed(name, "abc") + "junk", 100, &out).IsCorruption());
  }
  std::string out;
  CHECK(Make("zstd")->Decompress(Compressed("zstd", "abc") + "junk", 100, &out).IsCorruption());
}

TEST_CASE("a flipped byte in the middle is detected", "[compressor]") {
  const std::string in = Sample(20000);
  for (const char* name : {"zlib", "gzip"}) {  // both carry checksums of the content
    INFO(name);
    std::string packed = Compressed(name, in);
    packed[packed.size() - 3] ^= 0x55;
    std::string out;
    CHECK(Make(name)->Decompress(packed, in.size(), &out).IsCorruption());
  }
}

TEST_CASE("decompression stops at max_output", "[compressor]") {
  const std::string zeros(1 << 20, '\0');
  for (const char* name : kAll) {
    INFO(name);
    const auto c = Make(name);
    std::string packed, out;
    REQUIRE(c->Compress(zeros, &packed).ok());
    CHECK(c->Decompress(packed, 1000, &out).IsTooLarge());
    CHECK(c->Decompress(packed, zeros.size() - 1, &out).IsTooLarge());
    REQUIRE(c->Decompress(packed, zeros.size(), &out).ok());
    CHECK(out == zeros);
  }
}

TEST_CASE("a zstd frame that lies about its size is caught, not trusted", "[compressor]") {
  // A frame built by hand: magic, a descriptor with an 8-byte content size and a
  // single segment, the size (16 MiB, under the bound), then one raw last block
  // of only 3 bytes.
  std::string frame("\x28\xB5\x2F\xFD", 4);
  frame += '\xE0';  // FCS field 8 bytes, single segment
  const std::uint64_t declared = std::uint64_t{1} << 24;
  for (int i = 0; i < 8; ++i) frame += static_cast<char>((declared >> (8 * i)) & 0xFF);
  frame += std::string("\x19\x00\x00", 3);  // last block, raw, size 3
  frame += "abc";
  std::string out;
  Status s = Make("zstd")->Decompress(frame, kBound, &out);
  CHECK(s.IsCorruption());
  CHECK(out.capacity() < (std::size_t{1} << 20));  // nothing near the declared size was allocated
}

TEST_CASE("a zstd frame declaring more than the bound is refused from its header",
          "[compressor][bounds]") {
  const std::size_t bound = std::size_t{1} << 20;
  const std::uint64_t size = std::uint64_t{200} << 20;
  const std::string frame = ZstdRleFrame(size, 'x', size);  // about 6 KiB
  std::string out;
  Status s = Make("zstd")->Decompress(frame, bound, &out);
  CHECK(s.IsTooLarge());
  CHECK(s.message().find("1048576") != std::string_view::npos);
  CHECK(out.capacity() < 64 * 1024);  // no output buffer was grown for it
}

TEST_CASE("a zstd bomb of unknown size stops at the bound without allocating past it",
          "[compressor][bounds]") {
  for (const std::size_t bound :
       {std::size_t{1000000}, std::size_t{777777}, std::size_t{3} << 20}) {
    INFO("bound " << bound);
    std::string out;
    REQUIRE(Make("zstd")->Decompress(ZstdRleFrame(bound, 'x', std::nullopt), bound, &out).ok());
    CHECK(out == std::string(bound, 'x'));
    CHECK(out.capacity() <= bound + 1 + kCapacitySlack);

    std::string refused;
    Status s =
        Make("zstd")->Decompress(ZstdRleFrame(bound + 1, 'x', std::nullopt), bound, &refused);
    CHECK(s.IsTooLarge());
    CHECK(s.message().find(std::to_string(bound)) != std::string_view::npos);
    CHECK(refused.capacity() <= bound + 1 + kCapacitySlack);
  }
}

TEST_CASE("a zstd frame whose window is larger than the bound is refused", "[compressor][bounds]") {
  // Ten bytes, but a decoder streaming this frame would allocate its 128 MiB window.
  const std::string frame = ZstdRleFrame(10, 'x', std::nullopt, 27);
  std::string out;
  Status s = Make("zstd")->Decompress(frame, std::size_t{1} << 20, &out);
  CHECK(s.IsTooLarge());
  CHECK(s.message().find("window") != std::string_view::npos);
  REQUIRE(Make("zstd")->Decompress(frame, kBound, &out).ok());
  CHECK(out == "xxxxxxxxxx");
  // A 256 MiB window fits a bound of 1 GiB (past the decoder's own default of 128 MiB).
  const std::string wide = ZstdRleFrame(10, 'x', std::nullopt, 28);
  REQUIRE(Make("zstd")->Decompress(wide, std::size_t{1} << 30, &out).ok());
  CHECK(out == "xxxxxxxxxx");
  CHECK(Make("zstd")->Decompress(wide, std::size_t{1} << 27, &out).IsTooLarge());
}

TEST_CASE("a zlib or gzip bomb stops at the bound without allocating past it",
          "[compressor][bounds]") {
  for (const char* name : {"zlib", "gzip"}) {
    for (const std::size_t bound :
         {std::size_t{1000000}, std::size_t{777777}, std::size_t{3} << 20}) {
      INFO(name << ", bound " << bound);
      std::string out;
      REQUIRE(Make(name)->Decompress(Compressed(name, std::string(bound, '\0')), bound, &out).ok());
      CHECK(out.size() == bound);
      CHECK(out.capacity() <= bound + 1 + kCapacitySlack);

      const std::string bomb = Compressed(name, std::string(bound + 1, '\0'));
      CHECK(bomb.size() < bound / 500);
      std::string refused;
      Status s = Make(name)->Decompress(bomb, bound, &refused);
      CHECK(s.IsTooLarge());
      CHECK(s.message().find(std::to_string(bound)) != std::string_view::npos);
      CHECK(refused.capacity() <= bound + 1 + kCapacitySlack);
    }
  }
}

TEST_CASE("the compressor registry refuses bad registrations", "[compressor]") {
  CompressorRegistry registry;
  auto factory = [](int) -> cachet::Result<std::unique_ptr<Compressor>> {
    return CompressorRegistry::Global().Create("none");
  };
  CHECK(registry.Register("none", 0, factory).ok());
  CHECK(registry.Register("none", 0, factory).IsInvalidArgument());   // taken
  CHECK(registry.Register("other", 0, factory).IsInvalidArgument());  // makes "none"
  CHECK(registry.Register("x", 16, factory).IsInvalidArgument());
  CHECK(registry.Register("", 5, factory).IsInvalidArgument());
  CHECK(registry.Register("y", 5, nullptr).IsInvalidArgument());
  CHECK(registry.Create("none").ok());
}
