// ReadBuffer: whatever the pattern of writes and consumes, the unread bytes are
// kept in order, and a large unread reply is not moved on every write.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>

#include "cachet/net/read_buffer.h"

using cachet::net::ReadBuffer;

namespace {

// Writes `bytes` as a connection's receive would: into PrepareWrite's region.
void Receive(ReadBuffer& buffer, std::string_view bytes, std::size_t min_free) {
  char* at = buffer.PrepareWrite(std::max(min_free, bytes.size()));
  REQUIRE(buffer.writable() >= bytes.size());
  std::memcpy(at, bytes.data(), bytes.size());
  buffer.Commit(bytes.size());
}

}  // namespace

TEST_CASE("a read buffer keeps the unread bytes in order through compaction and growth",
          "[read_buffer]") {
  std::mt19937 random(42);
  ReadBuffer buffer;
  std::string expected;  // what data() must hold
  std::uint32_t next_byte = 0;
  for (int round = 0; round < 2000; ++round) {
    // Pieces of up to 70 KB, so the 64 KB reads of a connection both fit and
    // overflow the space left.
    std::string piece(random() % 70000, '\0');
    for (char& c : piece) c = static_cast<char>(next_byte++ % 251);
    Receive(buffer, piece, 64 * 1024);
    expected += piece;
    const std::size_t consumed = random() % (expected.size() + 1);
    buffer.Consume(consumed);
    expected.erase(0, consumed);
    REQUIRE(buffer.size() == expected.size());
    REQUIRE(buffer.data() == expected);
  }
}

TEST_CASE("a read buffer does not move large replies arriving in pieces over and over",
          "[read_buffer]") {
  // 100 replies of 100 KB arrive in 64 KB reads; each is consumed as soon as it
  // is whole, so a partial reply is nearly always left unread. Moving that
  // partial reply every time the space runs out would copy about a third of
  // the stream again; the buffer must grow instead and move little.
  constexpr std::size_t kReply = 100 * 1024;
  constexpr std::size_t kRead = 64 * 1024;
  const std::string piece(kRead, 'v');
  ReadBuffer buffer;
  std::size_t received = 0;
  std::size_t moved = 0;
  for (int read = 0; read < 160; ++read) {
    const char* before = buffer.data().data();
    const std::size_t unread = buffer.size();
    Receive(buffer, piece, kRead);
    if (unread > 0 && buffer.data().data() != before) moved += unread;
    received += kRead;
    while (buffer.size() >= kReply) buffer.Consume(kReply);
  }
  CHECK(moved < received / 10);
}

TEST_CASE("a direct read receives into its destination, then peeks at the next header",
          "[read_buffer]") {
  ReadBuffer buffer;
  Receive(buffer, "header\r\n", 64);
  buffer.Consume(8);
  std::string value(10, '?');
  buffer.ReceiveInto(value.data(), value.size());
  CHECK(buffer.owed() == 10);
  // Receives land in the destination and never in the buffer.
  char* at = buffer.PrepareWrite(65536);
  CHECK(at == value.data());
  CHECK(buffer.writable() == 10);
  std::memcpy(at, "0123", 4);
  buffer.Commit(4);
  CHECK(buffer.empty());
  CHECK(buffer.owed() == 6);
  at = buffer.PrepareWrite(65536);
  CHECK(at == value.data() + 4);
  std::memcpy(at, "456789", 6);
  buffer.Commit(6);
  CHECK(value == "0123456789");
  CHECK(buffer.owed() == 0);
  // The next receive is a short one, then reads are full size again.
  buffer.PrepareWrite(65536);
  CHECK(buffer.writable() == ReadBuffer::kPeekAfterDirect);
  buffer.Commit(0);
  CHECK(buffer.writable() >= 65536);

  // A Clear() (a closed connection) forgets a direct read under way.
  buffer.ReceiveInto(value.data(), value.size());
  buffer.Clear();
  CHECK(buffer.owed() == 0);
  CHECK(buffer.PrepareWrite(16) != value.data());
}
