// Envelope: the header layout, and the decorator that emulates flags and TTL over
// a store without them (the shared fake Backend here).
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cachet/envelope.h"
#include "support/fake_backend.h"

using cachet::Backend;
using cachet::Capabilities;
using cachet::Capability;
using cachet::DecodeEnvelope;
using cachet::EncodeEnvelope;
using cachet::EnvelopeHeader;
using cachet::HasEnvelope;
using cachet::Item;
using cachet::ItemView;
using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::StoreMode;
using cachet::Ttl;
using cachet::WriteOptions;

namespace {

// A map-based store with memcached semantics and the capabilities given. It
// keeps flags only when it declares kNativeFlags and never expires anything: it
// only records the TTL it was given.
class FakeStore final : public cachet::test::FakeBackend {
 public:
  explicit FakeStore(Capabilities caps) : FakeBackend(With(caps)) {}

 private:
  static Options With(Capabilities caps) {
    Options options;
    options.capabilities = caps;
    options.keep_flags = caps.has(Capability::kNativeFlags);
    return options;
  }
};

const Capabilities kBare{Capability::kCounters, Capability::kAppendPrepend};
const Capabilities kWithCas = kBare.with(Capability::kCas);
const Capabilities kRedisLike = kBare.with(Capability::kNativeTtl);

struct Wrapped {
  std::shared_ptr<FakeStore> inner;
  std::shared_ptr<Backend> outer;
};

Wrapped Wrap(Capabilities caps) {
  auto inner = std::make_shared<FakeStore>(caps);
  auto outer = cachet::WithEnvelope(inner);
  REQUIRE(outer != inner);
  return {inner, outer};
}

std::uint64_t NowMs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::string Expired(std::uint32_t flags, std::string_view value) {
  std::string out;
  EncodeEnvelope(EnvelopeHeader{flags, 1000}, value, &out);  // 1970: long gone
  return out;
}

const WriteOptions kNoTtl{};
const WriteOptions kOneHour{Ttl{std::chrono::hours(1)}};

}  // namespace

TEST_CASE("the envelope header has the documented bytes", "[envelope]") {
  std::string out = "pre";
  EncodeEnvelope(EnvelopeHeader{0x01020304u, 0x1122334455667788ull}, "abc", &out);
  // The last four header bytes are zlib's CRC-32 of the first sixteen.
  const std::string expected(
      "pre\xCA\xCE\x7E\x02\x04\x03\x02\x01\x88\x77\x66\x55\x44\x33\x22\x11"
      "\x0D\x9D\x50\xB3"
      "abc",
      26);
  CHECK(out == expected);
  EnvelopeHeader header;
  std::string_view value;
  REQUIRE(DecodeEnvelope(std::string_view(out).substr(3), &header, &value).ok());
  CHECK(header.flags == 0x01020304u);
  CHECK(header.expires_at_ms == 0x1122334455667788ull);
  CHECK(value == "abc");
  CHECK(HasEnvelope(std::string_view(out).substr(3)));
  CHECK_FALSE(HasEnvelope("abc"));
  CHECK_FALSE(HasEnvelope(""));
}

TEST_CASE("an empty value round-trips in an envelope", "[envelope]") {
  std::string out;
  EncodeEnvelope(EnvelopeHeader{7, 0}, "", &out);
  CHECK(out.size() == 20);
  EnvelopeHeader header;
  std::string_view value = "x";
  REQUIRE(DecodeEnvelope(out, &header, &value).ok());
  CHECK(header.flags == 7);
  CHECK(value.empty());
}

TEST_CASE("a truncated, unknown or mismatched header is no envelope", "[envelope]") {
  std::string full;
  EncodeEnvelope(EnvelopeHeader{1, 2}, "value", &full);
  EnvelopeHeader header;
  std::string_view value;
  for (std::size_t cut = 0; cut < 20; ++cut) {
    INFO("cut at " << cut);
    CHECK_FALSE(HasEnvelope(std::string_view(full).substr(0, cut)));
    CHECK(DecodeEnvelope(std::string_view(full).substr(0, cut), &header, &value).IsCorruption());
  }
  std::string wrong_version = full;
  wrong_version[3] = 9;
  CHECK_FALSE(HasEnvelope(wrong_version));
  Status s = DecodeEnvelope(wrong_version, &header, &value);
  CHECK(s.IsCorruption());
  CHECK(s.message().find("version 9") != std::string_view::npos);
  // Any one header byte changed fails the checksum.
  for (std::size_t at = 4; at < 20; ++at) {
    INFO("byte " << at);
    std::string changed = full;
    changed[at] = static_cast<char>(changed[at] ^ 0x01);
    CHECK_FALSE(HasEnvelope(changed));
    CHECK(DecodeEnvelope(changed, &header, &value).IsCorruption());
  }
}

TEST_CASE("WithEnvelope wraps only stores that lack flags or TTL", "[envelope]") {
  auto complete = std::make_shared<FakeStore>(
      kBare.with(Capability::kNativeFlags).with(Capability::kNativeTtl));
  CHECK(cachet::WithEnvelope(complete) == complete);
  CHECK(cachet::EmulatedCapabilities(*complete) == Capabilities());

  Wrapped bare = Wrap(kBare);
  const Capabilities caps = bare.outer->capabilities();
  CHECK(caps.has(Capability::kNativeFlags));
  CHECK(caps.has(Capability::kNativeTtl));
  CHECK(caps.has(Capability::kCounters));
  CHECK_FALSE(caps.has(Capability::kTouch));  // no CAS to rewrite the expiry with
  const Capabilities emulated = cachet::EmulatedCapabilities(*bare.outer);
  CHECK(emulated == Capabilities{Capability::kNativeFlags, Capability::kNativeTtl});
  CHECK(bare.outer->name() == "fake");

  Wrapped redis = Wrap(kRedisLike);
  CHECK(cachet::EmulatedCapabilities(*redis.outer) == Capabilities{Capability::kNativeFlags});

  Wrapped cas = Wrap(kWithCas);
  CHECK(cas.outer->capabilities().has(Capability::kTouch));
  CHECK(cachet::EmulatedCapabilities(*cas.outer).has(Capability::kGetAndTouch));
}

TEST_CASE("flags survive a store without flags, plain values stay raw", "[envelope]") {
  Wrapped w = Wrap(kBare);
  REQUIRE(w.outer->Store(StoreMode::kSet, "f", ItemView("payload", 0x314), kNoTtl).ok());
  Item item;
  REQUIRE(w.outer->Get("f", &item).ok());
  CHECK(item.value == "payload");
  CHECK(item.flags == 0x314);
  CHECK(HasEnvelope(w.inner->Raw("f")));

  REQUIRE(w.outer->Store(StoreMode::kSet, "plain", ItemView("hello", 0), kNoTtl).ok());
  CHECK(w.inner->Raw("plain") == "hello");
  REQUIRE(w.outer->Get("plain", &item).ok());
  CHECK(item.value == "hello");
  CHECK(item.flags == 0);
}

TEST_CASE("a plain cachet integer is stored raw so store counters work", "[envelope]") {
  Wrapped w = Wrap(kBare);
  REQUIRE(w.outer->Store(StoreMode::kSet, "n", ItemView("41", 1), kNoTtl).ok());
  CHECK(w.inner->Raw("n") == "41");
  std::uint64_t value = 0;
  REQUIRE(w.outer->Incr("n", 1, &value).ok());
  CHECK(value == 42);
  REQUIRE(w.outer->Decr("n", 50, &value).ok());
  CHECK(value == 0);
}

TEST_CASE("a raw value that starts with the magic reads back unchanged", "[envelope]") {
  Wrapped w = Wrap(kBare);
  const std::string tricky("\xCA\xCE\x7E\x01 not a header");
  REQUIRE(w.outer->Store(StoreMode::kSet, "t", ItemView(tricky), kNoTtl).ok());
  CHECK(w.inner->Raw("t").size() == tricky.size() + 20);
  Item item;
  REQUIRE(w.outer->Get("t", &item).ok());
  CHECK(item.value == tricky);
  CHECK(item.flags == 0);
}

TEST_CASE("a TTL is kept in the envelope of a store without TTL", "[envelope]") {
  Wrapped w = Wrap(kBare);
  const std::uint64_t before = NowMs();
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("v"), kOneHour).ok());
  EnvelopeHeader header;
  std::string_view value;
  const std::string raw = w.inner->Raw("k");
  REQUIRE(DecodeEnvelope(raw, &header, &value).ok());
  CHECK(header.expires_at_ms >= before + 3600 * 1000);
  CHECK(header.expires_at_ms <= NowMs() + 3600 * 1000);
  CHECK(w.inner->LastTtl("k") == Ttl{0});  // the inner store was given no TTL
  Item item;
  REQUIRE(w.outer->Get("k", &item).ok());
  CHECK(item.value == "v");
}

TEST_CASE("an expired value is a miss and a read leaves it stored", "[envelope]") {
  Wrapped w = Wrap(kBare);
  const std::string stale = Expired(5, "stale");
  w.inner->Put("old", stale);
  Item item;
  CHECK(w.outer->Get("old", &item).IsNotFound());
  CHECK(w.outer->Gets("old", &item).IsNotFound());
  REQUIRE(w.inner->Has("old"));  // a read never removes anything
  CHECK(w.inner->Raw("old") == stale);
  // The next write overwrites it.
  REQUIRE(w.outer->Store(StoreMode::kSet, "old", ItemView("fresh"), kNoTtl).ok());
  REQUIRE(w.outer->Get("old", &item).ok());
  CHECK(item.value == "fresh");
}

TEST_CASE("a negative TTL is invalid_argument and stores nothing", "[envelope]") {
  for (const Capabilities caps : {kBare, kWithCas, kRedisLike}) {
    Wrapped w = Wrap(caps);
    REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("old", 3), kNoTtl).ok());
    const std::string before = w.inner->Raw("k");
    for (StoreMode mode : {StoreMode::kSet, StoreMode::kAdd, StoreMode::kReplace,
                           StoreMode::kAppend, StoreMode::kPrepend, StoreMode::kCas}) {
      INFO("mode " << cachet::StoreModeName(mode));
      CHECK(w.outer->Store(mode, "k", ItemView("new"), WriteOptions{Ttl{-1}}).IsInvalidArgument());
    }
    CHECK(w.outer->Store(StoreMode::kSet, "absent", ItemView("new"), WriteOptions{Ttl{-1}})
              .IsInvalidArgument());
    CHECK(w.outer->Touch("k", Ttl{-1}).IsInvalidArgument());
    Item item;
    CHECK(w.outer->GetAndTouch("k", Ttl{-1}, &item).IsInvalidArgument());
    std::vector<Operation> batch(2);
    batch[0].kind = OpKind::kStore;
    batch[0].key = "k";
    batch[0].item = ItemView("new");
    batch[0].ttl = Ttl{-1};
    batch[1].kind = OpKind::kTouch;
    batch[1].key = "k";
    batch[1].ttl = Ttl{-1};
    w.outer->Execute(batch);
    CHECK(batch[0].status.IsInvalidArgument());
    CHECK(batch[1].status.IsInvalidArgument());
    CHECK(w.inner->Raw("k") == before);
    CHECK_FALSE(w.inner->Has("absent"));
  }
}

TEST_CASE("another program's bytes that start with the magic read back raw", "[envelope]") {
  Wrapped w = Wrap(kBare);
  // What tcrmgr or redis-cli could have written: the magic, then a header-like
  // run with an expiry in 1970, but no checksum that matches.
  std::string foreign("\xCA\xCE\x7E\x02\x00\x00\x00\x00\xE8\x03\x00\x00\x00\x00\x00\x00", 16);
  foreign += "\x00\x00\x00\x00 and some text";
  // And a value in the first envelope format, which had no checksum at all.
  const std::string version_one(
      "\xCA\xCE\x7E\x01\x05\x00\x00\x00\xE8\x03\x00\x00\x00\x00\x00\x00stale", 21);
  for (const std::string& bytes : {version_one, foreign, std::string("\xCA\xCE\x7E", 3)}) {
    w.inner->Put("foreign", bytes);
    Item item;
    REQUIRE(w.outer->Get("foreign", &item).ok());
    CHECK(item.value == bytes);
    CHECK(item.flags == 0);
    REQUIRE(w.inner->Has("foreign"));
    CHECK(w.inner->Raw("foreign") == bytes);
    std::vector<Operation> batch(1);
    batch[0].key = "foreign";
    w.outer->Execute(batch);
    REQUIRE(batch[0].status.ok());
    CHECK(batch[0].result.value == bytes);
  }
}

TEST_CASE("add and replace treat an expired value as absent", "[envelope]") {
  const Capabilities caps = GENERATE(kBare, kWithCas);
  Wrapped w = Wrap(caps);
  w.inner->Put("a", Expired(0, "stale"));
  CHECK(w.outer->Store(StoreMode::kAdd, "a", ItemView("fresh"), kNoTtl).ok());
  Item item;
  REQUIRE(w.outer->Get("a", &item).ok());
  CHECK(item.value == "fresh");
  CHECK(w.outer->Store(StoreMode::kAdd, "a", ItemView("again"), kNoTtl).IsNotStored());

  w.inner->Put("r", Expired(0, "stale"));
  CHECK(w.outer->Store(StoreMode::kReplace, "r", ItemView("new"), kNoTtl).IsNotStored());
  CHECK(w.inner->Raw("r") == Expired(0, "stale"));  // left for the next write
  CHECK(w.outer->Store(StoreMode::kReplace, "missing", ItemView("new"), kNoTtl).IsNotStored());
}

TEST_CASE("append goes after the payload of an enveloped value", "[envelope]") {
  Wrapped w = Wrap(kBare);
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("abc", 5), kOneHour).ok());
  REQUIRE(w.outer->Store(StoreMode::kAppend, "k", ItemView("def"), kNoTtl).ok());
  Item item;
  REQUIRE(w.outer->Get("k", &item).ok());
  CHECK(item.value == "abcdef");
  CHECK(item.flags == 5);
  CHECK(w.outer->Store(StoreMode::kAppend, "none", ItemView("x"), kNoTtl).IsNotStored());
  w.inner->Put("old", Expired(0, "stale"));
  CHECK(w.outer->Store(StoreMode::kAppend, "old", ItemView("x"), kNoTtl).IsNotStored());
}

TEST_CASE("append that would forge the magic is refused", "[envelope]") {
  Wrapped w = Wrap(kRedisLike);
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView(std::string("\xCA", 1)), kNoTtl).ok());
  Status s = w.outer->Store(StoreMode::kAppend, "k", ItemView(std::string("\xCE\x7E", 2)), kNoTtl);
  CHECK(s.IsUnsupported());
  CHECK(w.inner->Raw("k") == std::string("\xCA", 1));
  REQUIRE(w.outer->Store(StoreMode::kAppend, "k", ItemView("z"), kNoTtl).ok());
  CHECK(w.inner->Raw("k") == std::string("\xCAz", 2));
}

TEST_CASE("without CAS, prepend, incr and touch refuse rather than damage", "[envelope]") {
  Wrapped w = Wrap(kBare);
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("10", 7), kNoTtl).ok());
  const std::string before = w.inner->Raw("k");
  Status s = w.outer->Store(StoreMode::kPrepend, "k", ItemView("x"), kNoTtl);
  CHECK(s.IsUnsupported());
  CHECK(s.message().find("fake") != std::string_view::npos);
  std::uint64_t value = 0;
  CHECK(w.outer->Incr("k", 1, &value).IsUnsupported());
  CHECK(w.outer->Decr("k", 1, &value).IsUnsupported());
  CHECK(w.outer->Touch("k", Ttl{5000}).IsUnsupported());
  Item item;
  CHECK(w.outer->GetAndTouch("k", Ttl{5000}, &item).IsUnsupported());
  CHECK(w.inner->Raw("k") == before);

  // Raw values prepend normally; a raw non-number gets the store's own answer.
  REQUIRE(w.outer->Store(StoreMode::kSet, "r", ItemView("world"), kNoTtl).ok());
  REQUIRE(w.outer->Store(StoreMode::kPrepend, "r", ItemView("hello "), kNoTtl).ok());
  CHECK(w.inner->Raw("r") == "hello world");
  CHECK(w.outer->Incr("r", 1, &value).IsInvalidArgument());
  CHECK(w.outer->Store(StoreMode::kPrepend, "none", ItemView("x"), kNoTtl).IsNotStored());
}

TEST_CASE("with CAS, prepend, counters and touch rewrite the envelope", "[envelope]") {
  Wrapped w = Wrap(kWithCas);
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("world", 9), kOneHour).ok());
  REQUIRE(w.outer->Store(StoreMode::kPrepend, "k", ItemView("hello "), kNoTtl).ok());
  Item item;
  REQUIRE(w.outer->Get("k", &item).ok());
  CHECK(item.value == "hello world");
  CHECK(item.flags == 9);

  REQUIRE(w.outer->Store(StoreMode::kSet, "n", ItemView("5"), kOneHour).ok());
  REQUIRE(HasEnvelope(w.inner->Raw("n")));  // enveloped for its TTL
  std::uint64_t value = 0;
  REQUIRE(w.outer->Incr("n", 3, &value).ok());
  CHECK(value == 8);
  REQUIRE(w.outer->Decr("n", 10, &value).ok());
  CHECK(value == 0);
  EnvelopeHeader header;
  std::string_view payload;
  const std::string raw = w.inner->Raw("n");
  REQUIRE(DecodeEnvelope(raw, &header, &payload).ok());
  CHECK(payload == "0");
  CHECK(header.expires_at_ms > NowMs());  // the expiry was kept

  // Touch with no TTL drops the expiry: the value becomes raw again.
  REQUIRE(w.outer->Touch("n", Ttl{0}).ok());
  CHECK(w.inner->Raw("n") == "0");
  REQUIRE(w.outer->Touch("n", Ttl::max()).ok());  // kept exactly: no overflow
  REQUIRE(DecodeEnvelope(w.inner->Raw("n"), &header, &payload).ok());
  CHECK(header.expires_at_ms > static_cast<std::uint64_t>(Ttl::max().count()));
  REQUIRE(w.outer->Get("n", &item).ok());
  REQUIRE(w.outer->Remove("n").ok());
  CHECK(w.outer->Touch("n", Ttl{1000}).IsNotFound());

  REQUIRE(w.outer->Store(StoreMode::kSet, "g", ItemView("v", 3), kNoTtl).ok());
  REQUIRE(w.outer->GetAndTouch("g", Ttl{std::chrono::hours(2)}, &item).ok());
  CHECK(item.value == "v");
  CHECK(item.flags == 3);
  REQUIRE(DecodeEnvelope(w.inner->Raw("g"), &header, &payload).ok());
  CHECK(header.expires_at_ms > NowMs() + 3600 * 1000);
}

TEST_CASE("CapabilitiesThroughCache adds flags and TTL, and touch only with CAS", "[envelope]") {
  using cachet::CapabilitiesThroughCache;
  const Capabilities flags_ttl{Capability::kNativeFlags, Capability::kNativeTtl};
  const Capabilities touches{Capability::kTouch, Capability::kGetAndTouch};
  // No TTL, no CAS: flags and TTL added, touch dropped (the expiry lives in the value).
  CHECK(CapabilitiesThroughCache(kBare.with(Capability::kTouch)).bits() ==
        (kBare.bits() | flags_ttl.bits()));
  // No TTL, CAS: touch and get_and_touch rewrite the expiry through CAS.
  CHECK(CapabilitiesThroughCache(kWithCas).bits() ==
        (kWithCas.bits() | flags_ttl.bits() | touches.bits()));
  // Native TTL: only flags added; touch stays as the store declares it.
  CHECK(CapabilitiesThroughCache(kRedisLike).bits() == (kRedisLike.bits() | flags_ttl.bits()));
  CHECK(CapabilitiesThroughCache(kRedisLike.with(Capability::kTouch)).has(Capability::kTouch));
  // Both native: unchanged, and the store is not wrapped.
  const Capabilities full = kBare.with(Capability::kNativeFlags).with(Capability::kNativeTtl);
  CHECK(CapabilitiesThroughCache(full).bits() == full.bits());
  // What a wrapped store reports is the same.
  CHECK(cachet::WithEnvelope(std::make_shared<FakeStore>(kWithCas))->capabilities().bits() ==
        CapabilitiesThroughCache(kWithCas).bits());
}

// Found by a plugin author's store (CAS, no native TTL, no append or prepend):
// cachet did prepends through CAS while the store refused appends.
TEST_CASE("a store without append and prepend gets no prepend through CAS", "[envelope]") {
  Wrapped w = Wrap(Capabilities{Capability::kCounters, Capability::kCas});
  CHECK_FALSE(w.outer->capabilities().has(Capability::kAppendPrepend));
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("mid", 5), kOneHour).ok());
  const Status alone = w.outer->Store(StoreMode::kPrepend, "k", ItemView("start-"), kNoTtl);
  INFO(alone.ToString());
  CHECK(alone.IsUnsupported());
  std::vector<Operation> batch(2);
  batch[0].kind = OpKind::kStore;
  batch[0].mode = StoreMode::kPrepend;
  batch[0].key = "k";
  batch[0].item = ItemView("start-");
  batch[1].kind = OpKind::kGet;
  batch[1].key = "k";
  w.outer->Execute(batch);
  CHECK(batch[0].status.IsUnsupported());
  REQUIRE(batch[1].status.ok());
  CHECK(batch[1].result.value == "mid");
  CHECK(batch[1].result.flags == 5);
}

TEST_CASE("a store with native TTL gets the TTL, only flags are enveloped", "[envelope]") {
  Wrapped w = Wrap(kRedisLike);
  REQUIRE(w.outer->Store(StoreMode::kSet, "k", ItemView("v"), kOneHour).ok());
  CHECK(w.inner->Raw("k") == "v");
  CHECK(w.inner->LastTtl("k") == Ttl{std::chrono::hours(1)});
  REQUIRE(w.outer->Store(StoreMode::kSet, "f", ItemView("v", 2), kOneHour).ok());
  EnvelopeHeader header;
  std::string_view payload;
  const std::string raw = w.inner->Raw("f");
  REQUIRE(DecodeEnvelope(raw, &header, &payload).ok());
  CHECK(header.flags == 2);
  CHECK(header.expires_at_ms == 0);
  CHECK(w.outer->Store(StoreMode::kPrepend, "f", ItemView("x"), kNoTtl).IsUnsupported());
}

TEST_CASE("a damaged header is no envelope: the bytes read raw and stay", "[envelope]") {
  Wrapped w = Wrap(kBare);
  std::string damaged;
  EncodeEnvelope(EnvelopeHeader{9, 0}, "payload", &damaged);
  damaged[5] = static_cast<char>(damaged[5] ^ 0x40);
  w.inner->Put("bad", damaged);
  Item item;
  REQUIRE(w.outer->Get("bad", &item).ok());
  CHECK(item.value == damaged);
  CHECK(item.flags == 0);
  CHECK(w.inner->Raw("bad") == damaged);
}

TEST_CASE("batches are translated and still reach the store in one call", "[envelope]") {
  Wrapped w = Wrap(kBare);
  w.inner->Put("old", Expired(0, "stale"));
  REQUIRE(w.outer->Store(StoreMode::kSet, "n", ItemView("1", 1), kNoTtl).ok());
  std::vector<Operation> batch(6);
  batch[0].kind = OpKind::kStore;
  batch[0].key = "a";
  batch[0].item = ItemView("alpha", 7);
  batch[1].kind = OpKind::kGet;
  batch[1].key = "a";
  batch[2].kind = OpKind::kGet;
  batch[2].key = "old";
  batch[3].kind = OpKind::kGet;
  batch[3].key = "missing";
  batch[4].kind = OpKind::kIncr;
  batch[4].key = "n";
  batch[4].delta = 5;
  batch[5].kind = OpKind::kGet;  // the counter's key: no CAS here, so nothing is redone
  batch[5].key = "n";
  w.inner->ResetCounts();
  w.outer->Execute(batch);
  CHECK(w.inner->execute_calls() == 1);
  CHECK(batch[0].status.ok());
  REQUIRE(batch[1].status.ok());
  CHECK(batch[1].result.value == "alpha");
  CHECK(batch[1].result.flags == 7);
  CHECK(batch[2].status.IsNotFound());
  CHECK(w.inner->Has("old"));  // a read never removes
  CHECK(batch[3].status.IsNotFound());
  REQUIRE(batch[4].status.ok());
  CHECK(batch[4].counter == 6);
  REQUIRE(batch[5].status.ok());
  CHECK(batch[5].result.value == "6");
  CHECK(HasEnvelope(w.inner->Raw("a")));
}

TEST_CASE("operations a batch cannot pipeline run in order between runs", "[envelope]") {
  Wrapped w = Wrap(kBare);
  std::vector<Operation> batch(4);
  batch[0].kind = OpKind::kStore;
  batch[0].key = "k";
  batch[0].item = ItemView("b");
  batch[1].kind = OpKind::kStore;  // prepend is checked one by one
  batch[1].mode = StoreMode::kPrepend;
  batch[1].key = "k";
  batch[1].item = ItemView("a");
  batch[2].kind = OpKind::kStore;  // append needs an expiry check without native TTL
  batch[2].mode = StoreMode::kAppend;
  batch[2].key = "k";
  batch[2].item = ItemView("c");
  batch[3].kind = OpKind::kGet;
  batch[3].key = "k";
  w.outer->Execute(batch);
  CHECK(batch[0].status.ok());
  CHECK(batch[1].status.ok());
  CHECK(batch[2].status.ok());
  REQUIRE(batch[3].status.ok());
  CHECK(batch[3].result.value == "abc");
}

// A counter on an enveloped value is redone after its run, so what follows it
// on its key waits for the next run: batch order holds.
TEST_CASE("without CAS a batch counter on an envelope answers as alone, whatever follows",
          "[envelope]") {
  // The counter's answer is decided by reading the key after its run: a later
  // write of the key in the same run must not be what that read finds.
  for (const bool then_remove : {true, false}) {
    INFO((then_remove ? "then remove" : "then set a number"));
    Wrapped w = Wrap(kRedisLike);
    REQUIRE(w.outer->Store(StoreMode::kSet, "d", ItemView("1.5", 7), kNoTtl).ok());
    REQUIRE(HasEnvelope(w.inner->Raw("d")));
    std::uint64_t alone = 0;
    const Status single = w.outer->Incr("d", 1, &alone);
    CHECK(single.IsUnsupported());
    std::vector<Operation> batch(2);
    batch[0].kind = OpKind::kIncr;
    batch[0].key = "d";
    batch[0].delta = 1;
    batch[1].key = "d";
    if (then_remove) {
      batch[1].kind = OpKind::kRemove;
    } else {
      batch[1].kind = OpKind::kStore;
      batch[1].item = ItemView("10");
    }
    w.outer->Execute(batch);
    CHECK(batch[0].status.code() == single.code());
    CHECK(batch[1].status.ok());
  }
}

TEST_CASE("a counter redone on an envelope still comes before what follows it", "[envelope]") {
  Wrapped w = Wrap(kWithCas);
  REQUIRE(w.outer->Store(StoreMode::kSet, "n", ItemView("5"), kOneHour).ok());
  REQUIRE(HasEnvelope(w.inner->Raw("n")));
  std::vector<Operation> batch(4);
  batch[0].kind = OpKind::kIncr;
  batch[0].key = "n";
  batch[0].delta = 1;
  batch[1].kind = OpKind::kGet;
  batch[1].key = "n";
  batch[2].kind = OpKind::kStore;
  batch[2].key = "n";
  batch[2].item = ItemView("10");
  batch[3].kind = OpKind::kGet;
  batch[3].key = "other";
  w.inner->ResetCounts();
  w.outer->Execute(batch);
  REQUIRE(batch[0].status.ok());
  CHECK(batch[0].counter == 6);
  REQUIRE(batch[1].status.ok());
  CHECK(batch[1].result.value == "6");
  CHECK(batch[2].status.ok());
  CHECK(batch[3].status.IsNotFound());
  Item item;
  REQUIRE(w.outer->Get("n", &item).ok());
  CHECK(item.value == "10");
  CHECK(w.inner->execute_calls() == 2);
}

TEST_CASE("counters in a row on one key share a pipelined run", "[envelope]") {
  // A batch that increments one key many times (a pipeline of INCR) goes to the
  // store in one Execute, and each counter answers in batch order.
  Wrapped w = Wrap(kRedisLike);
  REQUIRE(w.outer->Store(StoreMode::kSet, "c", ItemView("0"), kNoTtl).ok());
  REQUIRE_FALSE(HasEnvelope(w.inner->Raw("c")));
  std::vector<Operation> batch(101);
  for (std::size_t i = 0; i < 100; ++i) {
    batch[i].kind = i % 10 == 9 ? OpKind::kDecr : OpKind::kIncr;
    batch[i].key = "c";
    batch[i].delta = 2;
  }
  batch[100].kind = OpKind::kGet;
  batch[100].key = "c";
  w.inner->ResetCounts();
  w.outer->Execute(batch);
  CHECK(w.inner->execute_calls() == 1);
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < 100; ++i) {
    INFO("counter " << i);
    expected = batch[i].kind == OpKind::kIncr ? expected + 2 : expected - 2;
    REQUIRE(batch[i].status.ok());
    CHECK(batch[i].counter == expected);
  }
  REQUIRE(batch[100].status.ok());
  CHECK(batch[100].result.value == std::to_string(expected));
}

TEST_CASE("counters in a row redone on an envelope are decided in batch order", "[envelope]") {
  // The store refuses each (the value is enveloped); each is redone after the
  // run, in order, and a read of the key waits for the next run.
  Wrapped w = Wrap(kWithCas);
  REQUIRE(w.outer->Store(StoreMode::kSet, "n", ItemView("5"), kOneHour).ok());
  REQUIRE(HasEnvelope(w.inner->Raw("n")));
  std::vector<Operation> batch(4);
  for (std::size_t i = 0; i < 3; ++i) {
    batch[i].kind = i == 1 ? OpKind::kDecr : OpKind::kIncr;
    batch[i].key = "n";
    batch[i].delta = 10;
  }
  batch[3].kind = OpKind::kGet;
  batch[3].key = "n";
  w.inner->ResetCounts();
  w.outer->Execute(batch);
  REQUIRE(batch[0].status.ok());
  CHECK(batch[0].counter == 15);
  REQUIRE(batch[1].status.ok());
  CHECK(batch[1].counter == 5);
  REQUIRE(batch[2].status.ok());
  CHECK(batch[2].counter == 15);
  REQUIRE(batch[3].status.ok());
  CHECK(batch[3].result.value == "15");
  CHECK(HasEnvelope(w.inner->Raw("n")));  // still expires
  CHECK(w.inner->execute_calls() == 2);   // the counters' run, then the read's
}

namespace {

// Redis's counters: a delta over 2^63 - 1 is refused before anything is sent,
// and a missing key counts from 0.
class SignedCounterStore final : public cachet::test::FakeBackend {
 public:
  SignedCounterStore() {}
  cachet::Capabilities capabilities() const noexcept override { return kRedisLike; }
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override {
    return Step(key, delta, true, value);
  }
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override {
    return Step(key, delta, false, value);
  }

 private:
  Status Step(std::string_view key, std::uint64_t delta, bool incr, std::uint64_t* value) {
    if (delta > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return Status::InvalidArgument("delta out of range");
    }
    if (!Has(std::string(key))) Put(std::string(key), "0");
    return incr ? FakeBackend::Incr(key, delta, value) : FakeBackend::Decr(key, delta, value);
  }
};

}  // namespace

TEST_CASE("a counter refused before it reached the store answers in a batch as alone",
          "[envelope]") {
  // The refused counter changes nothing, so the next one on its key (which
  // creates the key) runs beside it; the refusal must still read as the store's.
  const std::uint64_t too_big = std::uint64_t{1} << 63;
  auto alone_inner = std::make_shared<SignedCounterStore>();
  auto alone = cachet::WithEnvelope(alone_inner);
  std::uint64_t value = 0;
  const Status first = alone->Incr("k", too_big, &value);
  CHECK(first.IsInvalidArgument());
  REQUIRE(alone->Incr("k", 1, &value).ok());
  CHECK(value == 1);

  auto inner = std::make_shared<SignedCounterStore>();
  auto outer = cachet::WithEnvelope(inner);
  std::vector<Operation> batch(2);
  for (Operation& op : batch) {
    op.kind = OpKind::kIncr;
    op.key = "k";
  }
  batch[0].delta = too_big;
  batch[1].delta = 1;
  outer->Execute(batch);
  CHECK(batch[0].status.code() == first.code());
  REQUIRE(batch[1].status.ok());
  CHECK(batch[1].counter == 1);
}
