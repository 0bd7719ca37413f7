// The Redis plugin's SHA-1 and CAS tokens, without a server: the FIPS 180
// example vectors, block-boundary lengths, every script's EVALSHA name, and the
// token's form.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "cas_token.h"
#include "lua_scripts.h"
#include "sha1.h"

using cachet::redis::CasTokenOf;
using cachet::redis::CasTokenText;
using cachet::redis::Sha1Hex;

namespace {

// Bytes 0, 1, 2, ... modulo 251, so no block repeats the one before it.
std::string Pattern(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i % 251);
  return bytes;
}

}  // namespace

TEST_CASE("SHA-1 gives the FIPS 180 example digests", "[redis][sha1]") {
  CHECK(Sha1Hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(Sha1Hex(std::string(1000000, 'a')) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  CHECK(Sha1Hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(Sha1Hex(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnop"
            "qrlmnopqrsmnopqrstnopqrstu") == "a49b2446a02c645bf419f995b67091253a04a259");
}

TEST_CASE("SHA-1 pads correctly around the 64-byte block boundaries", "[redis][sha1]") {
  // Digests from Python's hashlib. 55 bytes are the most that leave room for the
  // length in the last block; 56 need a second padding block.
  CHECK(Sha1Hex(Pattern(55)) == "8ae2d46729cfe68ff927af5eec9c7d1b66d65ac2");
  CHECK(Sha1Hex(Pattern(56)) == "636e2ec698dac903498e648bd2f3af641d3c88cb");
  CHECK(Sha1Hex(Pattern(63)) == "6d942da0c4392b123528f2905c713a3ce28364bd");
  CHECK(Sha1Hex(Pattern(64)) == "c6138d514ffa2135bfce0ed0b8fac65669917ec7");
  CHECK(Sha1Hex(Pattern(65)) == "69bd728ad6e13cd76ff19751fde427b00e395746");
  CHECK(Sha1Hex(Pattern(119)) == "41c89d06001bab4ab78736b44efe7ce18ce6ae08");
  CHECK(Sha1Hex(Pattern(120)) == "d3dbd653bd8597b7475321b60a36891278e6a04a");
}

TEST_CASE("every script's EVALSHA name is the SHA-1 of its source", "[redis][sha1]") {
  using namespace cachet::redis;
  for (const LuaScript* script : {&kAppendScript, &kPrependScript, &kCasScript, &kCounterScript,
                                   &kLeaseGetScript, &kLeaseEndScript}) {
    CAPTURE(script->source);
    CHECK(Sha1Hex(script->source) == script->sha1);
  }
}

TEST_CASE("a CAS token is the first 16 hex digits of the value's SHA-1", "[redis][sha1]") {
  CHECK(CasTokenOf("abc") == 0xa9993e364706816aULL);
  CHECK(CasTokenText(CasTokenOf("abc")).view() == "a9993e364706816a");
  CHECK(CasTokenOf("") == 0xda39a3ee5e6b4b0dULL);
  CHECK(CasTokenText(1).view() == "0000000000000001");
  CHECK(CasTokenText(0xffffffffffffffffULL).view() == "ffffffffffffffff");
  // Different bytes, different tokens; the same bytes, the same token.
  CHECK(CasTokenOf("v1") != CasTokenOf("v2"));
  CHECK(CasTokenOf(std::string("a\0b", 3)) != CasTokenOf(std::string("a\0c", 3)));
  CHECK(CasTokenOf("same") == CasTokenOf(std::string("same")));
}
