// memcached request encoding, key checks, exptime and the reply-to-Status table.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "exptime.h"
#include "key_check.h"
#include "meta_request.h"
#include "reply_status.h"
#include "text_request.h"

namespace cachet::memcached {
namespace {

using namespace std::string_literals;

// Every byte of a request, referenced values included.
std::string Flatten(const RequestBuffer& buffer) {
  std::vector<iovec> iovs;
  buffer.Iovecs(&iovs);
  std::string out;
  for (const iovec& v : iovs) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  REQUIRE(out.size() == buffer.size());
  return out;
}

}  // namespace

TEST_CASE("keys are checked before anything is sent", "[memcached][keys]") {
  CHECK(CheckKey("user:42", false).ok());
  CHECK(CheckKey(std::string(250, 'k'), false).ok());
  Status long_key = CheckKey(std::string(251, 'k'), false);
  CHECK(long_key.IsInvalidArgument());
  CHECK(long_key.message().find("251 bytes") != std::string_view::npos);
  Status space = CheckKey("a b", false);
  CHECK(space.IsInvalidArgument());
  CHECK(space.message().find("space") != std::string_view::npos);
  Status crlf = CheckKey("k\r\nflush_all", false);
  CHECK(crlf.IsInvalidArgument());
  CHECK(crlf.message().find("\\x0d") != std::string_view::npos);
  CHECK(CheckKey("tab\there", false).IsInvalidArgument());
  CHECK(CheckKey("del\x7f", false).IsInvalidArgument());
  CHECK(CheckKey("", false).IsInvalidArgument());
  // Binary keys: any bytes, 186 raw bytes at most (250 once base64-encoded).
  CHECK(CheckKey("a b\r\n\0"s, true).ok());
  CHECK(CheckKey(std::string(186, '\0'), true).ok());
  CHECK(CheckKey(std::string(187, '\0'), true).IsInvalidArgument());
}

TEST_CASE("every byte value at every position of a key is judged alike", "[memcached][keys]") {
  // The check reads eight bytes at a time: each byte is tried at each offset of
  // a 20-byte key (two whole words and a tail), among neighbours that are
  // allowed, including bytes of 0x80 and up.
  for (int byte = 0; byte < 256; ++byte) {
    const bool forbidden = byte <= 0x20 || byte == 0x7f;
    for (std::size_t at = 0; at < 20; ++at) {
      std::string key(20, 'k');
      key[(at + 1) % 20] = '\xff';
      key[at] = static_cast<char>(byte);
      INFO("byte " << byte << " at " << at);
      CHECK(CheckKey(key, false).IsInvalidArgument() == forbidden);
    }
  }
}

TEST_CASE("keys of every length up to three words are judged alike", "[memcached][keys]") {
  // Shorter keys are read four or eight bytes at a time in overlapping words:
  // each length, a forbidden byte at each position, and an allowed neighbour.
  for (std::size_t length = 1; length <= 24; ++length) {
    const std::string allowed(length, '\x80');
    CHECK(CheckKey(allowed, false).ok());
    for (std::size_t at = 0; at < length; ++at) {
      for (const char byte : {'\0', '\x1f', ' ', '\x7f'}) {
        std::string key = allowed;
        key[at] = byte;
        INFO("length " << length << ", byte " << int{byte} << " at " << at);
        CHECK(CheckKey(key, false).IsInvalidArgument());
      }
      std::string key = allowed;
      key[at] = '!';
      CHECK(CheckKey(key, false).ok());
    }
  }
}

TEST_CASE("text requests", "[memcached][request]") {
  RequestBuffer b;
  AppendTextStore(b, StoreMode::kSet, "k", ItemView("hello", 7), 30, false);
  AppendTextStore(b, StoreMode::kCas, "k", ItemView("v", 0, 99), 0, true);
  AppendTextDelete(b, "k", false);
  AppendTextArithmetic(b, true, "n", 5, true);
  AppendTextTouch(b, "k", -1, false);
  BeginTextRetrieval(b, false, 0);
  AppendTextKey(b, "a");
  AppendTextKey(b, "b");
  EndTextLine(b);
  BeginTextRetrieval(b, true, 10);
  AppendTextKey(b, "a");
  EndTextLine(b);
  AppendTextCommand(b, "flush_all");
  CHECK(Flatten(b) ==
        "set k 7 30 5\r\nhello\r\n"
        "cas k 0 0 1 99 noreply\r\nv\r\n"
        "delete k\r\n"
        "decr n 5 noreply\r\n"
        "touch k -1\r\n"
        "gets a b\r\n"
        "gats 10 a\r\n"
        "flush_all\r\n");
}

TEST_CASE("large values are referenced, not copied", "[memcached][request]") {
  RequestBuffer b;
  std::string big(100000, 'x');
  AppendTextStore(b, StoreMode::kAppend, "k", ItemView(big), 0, false);
  CHECK(b.text().size() < 100);
  std::vector<iovec> iovs;
  b.Iovecs(&iovs);
  REQUIRE(iovs.size() == 3);
  CHECK(iovs[1].iov_base == big.data());
  CHECK(Flatten(b) == "append k 0 0 100000\r\n" + big + "\r\n");
}

TEST_CASE("meta requests", "[memcached][request]") {
  RequestBuffer b;
  AppendMetaGet(b, "k", {1, true, false}, true, false, 0);
  AppendMetaGet(b, "k", {2, false, false}, false, true, 60);
  AppendMetaSet(b, StoreMode::kAdd, "k", ItemView("ab", 3), 5, {3, true, false});
  AppendMetaSet(b, StoreMode::kCas, "k", ItemView("ab", 0, 77), 0, {4, false, false});
  AppendMetaDelete(b, "k", {5, true, false});
  AppendMetaArithmetic(b, true, "n", 2, {6, false, false});
  AppendMetaArithmetic(b, false, "n", 1, {7, true, false});
  AppendMetaDelete(b, "k", {8, false, false}, true, 42);  // a lease given back, if still ours
  AppendMetaDelete(b, "k", {9, false, false}, false, 18446744073709551615u);
  AppendMetaNoop(b);
  CHECK(Flatten(b) ==
        "mg k v f c k O1 q\r\n"
        "mg k T60 O2\r\n"
        "ms k 2 F3 T5 ME O3 q\r\nab\r\n"
        "ms k 2 F0 T0 C77 O4\r\nab\r\n"
        "md k O5 q\r\n"
        "ma n D2 MD v O6\r\n"
        "ma n D1 O7 q\r\n"
        "md k I C42 O8\r\n"
        "md k C18446744073709551615 O9\r\n"
        "mn\r\n");
}

TEST_CASE("binary keys go out base64-encoded", "[memcached][request]") {
  RequestBuffer b;
  AppendMetaDelete(b, "a b\r\n"s, {0, false, true});
  CHECK(Flatten(b) == "md YSBiDQo= b O0\r\n");
  RequestBuffer c;
  AppendBase64(c, "");
  AppendBase64(c, "f");
  c.Append(' ');
  AppendBase64(c, "fo");
  c.Append(' ');
  AppendBase64(c, "foo");
  c.Append(' ');
  AppendBase64(c, "foobar");
  CHECK(Flatten(c) == "Zg== Zm8= Zm9v Zm9vYmFy");  // RFC 4648 test vectors
}

TEST_CASE("exptime: relative up to 30 days, absolute beyond", "[memcached][request]") {
  using std::chrono::milliseconds;
  CHECK(ExptimeFor(milliseconds(0)) == 0);
  CHECK(ExptimeFor(milliseconds(1)) == 1);
  CHECK(ExptimeFor(milliseconds(1500)) == 2);
  const std::int64_t thirty_days = 30LL * 24 * 3600;
  CHECK(ExptimeFor(milliseconds(thirty_days * 1000)) == thirty_days);
  std::int64_t absolute = ExptimeFor(milliseconds((thirty_days + 1) * 1000));
  CHECK(absolute > 1700000000);  // a Unix time, not a duration
}

TEST_CASE("recache: R is read as an exptime, relative up to 30 days, absolute beyond",
          "[memcached][request]") {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  CHECK(RecacheFor(milliseconds(0)) == 0);
  CHECK(RecacheFor(milliseconds(1500)) == 2);
  const std::int64_t thirty_days = 30LL * 24 * 3600;
  CHECK(RecacheFor(seconds(thirty_days)) == thirty_days);
  // 40 days sent as 3456000 would be a Unix time in 1970: no item would qualify.
  const std::int64_t forty_days = RecacheFor(seconds(40LL * 24 * 3600));
  CHECK(forty_days > 1700000000);
  // Any TTL at all: the latest time memcached holds, never 0 (none).
  CHECK(RecacheFor(milliseconds::max()) == 2147483647);
  CHECK(RecacheFor(seconds(400000000)) == 2147483647);
}

TEST_CASE("exptime: an expiry past 2038 is none, never a wrapped time", "[memcached][request]") {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  // 400,000,000 s from now is past 2^31-1 seconds of Unix time.
  CHECK(ExptimeFor(seconds(400000000)) == 0);
  CHECK(ExptimeFor(milliseconds::max()) == 0);
  CHECK(ExptimeFor(milliseconds::max() - milliseconds(1)) == 0);
  // One year ahead still fits: an absolute time at most 2^31-1.
  const std::int64_t year = ExptimeFor(seconds(365LL * 24 * 3600));
  CHECK(year > 1700000000);
  CHECK(year <= 2147483647);
}

TEST_CASE("replies map one-to-one onto Status", "[memcached][status]") {
  auto code = [](ReplyKind kind, std::string_view text = {}) {
    Reply r;
    r.kind = kind;
    r.text = text;
    return StatusFromReply(r).code();
  };
  CHECK(code(ReplyKind::kStored) == StatusCode::kOk);
  CHECK(code(ReplyKind::kMetaHeader) == StatusCode::kOk);
  CHECK(code(ReplyKind::kEnd) == StatusCode::kNotFound);
  CHECK(code(ReplyKind::kMetaMiss) == StatusCode::kNotFound);
  CHECK(code(ReplyKind::kNotFound) == StatusCode::kNotFound);
  CHECK(code(ReplyKind::kNotStored) == StatusCode::kNotStored);
  CHECK(code(ReplyKind::kExists) == StatusCode::kExists);
  CHECK(code(ReplyKind::kError) == StatusCode::kProtocolError);
  CHECK(code(ReplyKind::kClientError, "cannot increment or decrement non-numeric value") ==
        StatusCode::kInvalidArgument);
  CHECK(code(ReplyKind::kServerError, "object too large for cache") == StatusCode::kTooLarge);
  CHECK(code(ReplyKind::kServerError, "out of memory storing object") == StatusCode::kIoError);
  Reply r;
  r.kind = ReplyKind::kClientError;
  r.text = "bad data chunk";
  CHECK(StatusFromReply(r).message() == "memcached: CLIENT_ERROR bad data chunk");
}

}  // namespace cachet::memcached
