// Serializers: the json, msgpack and cbor built-ins and their registry.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "cachet/serializer.h"

using cachet::Json;
using cachet::Serializer;
using cachet::SerializerRegistry;
using cachet::Status;

namespace {

const Serializer& Builtin(const char* name) {
  const Serializer* s = SerializerRegistry::Global().Find(name);
  REQUIRE(s != nullptr);
  return *s;
}

Json SampleDocument() {
  return Json{{"name", "caf\xC3\xA9"},
              {"count", 42},
              {"big", 18446744073709551615ull},
              {"negative", -7},
              {"ratio", 0.25},
              {"ok", true},
              {"none", nullptr},
              {"items", Json::array({1, "two", Json::array({3.5})})},
              {"nested", {{"a", {{"b", "c"}}}}}};
}

// Minimal serializer for registry tests.
class FakeSerializer final : public Serializer {
 public:
  FakeSerializer(std::string name, std::uint8_t id) : name_(std::move(name)), id_(id) {}
  std::string_view name() const noexcept override { return name_; }
  std::uint8_t id() const noexcept override { return id_; }
  Status Serialize(const Json&, std::string*) const override { return Status::OK(); }
  Status Deserialize(std::string_view, Json*) const override { return Status::OK(); }

 private:
  std::string name_;
  std::uint8_t id_;
};

}  // namespace

TEST_CASE("the built-in serializers are registered with their ids", "[serializer]") {
  auto& registry = SerializerRegistry::Global();
  CHECK(Builtin("json").id() == 1);
  CHECK(Builtin("msgpack").id() == 2);
  CHECK(Builtin("cbor").id() == 3);
  CHECK(registry.FindById(2) == &Builtin("msgpack"));
  CHECK(registry.Find("yaml") == nullptr);
  CHECK(registry.FindById(15) == nullptr);
  const auto names = registry.Names();
  CHECK(std::find(names.begin(), names.end(), "cbor") != names.end());
}

TEST_CASE("every built-in serializer round-trips a document", "[serializer]") {
  for (const char* name : {"json", "msgpack", "cbor"}) {
    INFO(name);
    const Serializer& s = Builtin(name);
    std::string bytes;
    REQUIRE(s.Serialize(SampleDocument(), &bytes).ok());
    CHECK_FALSE(bytes.empty());
    Json back;
    REQUIRE(s.Deserialize(bytes, &back).ok());
    CHECK(back == SampleDocument());
  }
}

TEST_CASE("Serialize appends to what the string holds", "[serializer]") {
  std::string out = "prefix:";
  REQUIRE(Builtin("json").Serialize(Json{1, 2}, &out).ok());
  CHECK(out == "prefix:[1,2]");
}

TEST_CASE("the json serializer writes plain JSON text", "[serializer]") {
  std::string out;
  REQUIRE(Builtin("json").Serialize(Json{{"a", 1}}, &out).ok());
  CHECK(out == R"({"a":1})");
}

TEST_CASE("bad input is corruption, never an exception", "[serializer]") {
  const std::string bad_json = "{\"a\": ";
  const std::string truncated_msgpack("\x82\xA1\x61\x01", 4);  // a map of 2, one entry
  const std::string bad_cbor("\xFF\xFF", 2);
  Json doc = 7;
  Status s = Builtin("json").Deserialize(bad_json, &doc);
  CHECK(s.IsCorruption());
  CHECK(s.message().find("json") != std::string_view::npos);
  CHECK(doc == 7);  // untouched on failure
  CHECK(Builtin("msgpack").Deserialize(truncated_msgpack, &doc).IsCorruption());
  CHECK(Builtin("cbor").Deserialize(bad_cbor, &doc).IsCorruption());
  CHECK(Builtin("json").Deserialize("", &doc).IsCorruption());
  CHECK(Builtin("msgpack").Deserialize("", &doc).IsCorruption());
  CHECK(Builtin("cbor").Deserialize("", &doc).IsCorruption());
}

TEST_CASE("trailing bytes after a document are corruption", "[serializer]") {
  Json doc;
  CHECK(Builtin("json").Deserialize("[1] x", &doc).IsCorruption());
  std::string packed;
  REQUIRE(Builtin("msgpack").Serialize(Json{1}, &packed).ok());
  CHECK(Builtin("msgpack").Deserialize(packed + "\x01", &doc).IsCorruption());
}

TEST_CASE("absurd nesting is refused without exhausting the stack", "[serializer]") {
  const std::size_t depth = 200000;
  Json doc;
  Status s = Builtin("json").Deserialize(std::string(depth, '['), &doc);
  CHECK(s.IsCorruption());
  CHECK(s.message().find("nested deeper") != std::string_view::npos);
  CHECK(Builtin("msgpack").Deserialize(std::string(depth, '\x91'), &doc).IsCorruption());
  CHECK(Builtin("cbor").Deserialize(std::string(depth, '\x81'), &doc).IsCorruption());
}

TEST_CASE("moderate nesting still reads", "[serializer]") {
  std::string text = std::string(100, '[') + std::string(100, ']');
  Json doc;
  CHECK(Builtin("json").Deserialize(text, &doc).ok());
}

TEST_CASE("a document JSON cannot represent is an invalid argument", "[serializer]") {
  const Json doc = {{"bad", std::string("\xFF\xFE", 2)}};  // not UTF-8
  std::string out = "keep";
  Status s = Builtin("json").Serialize(doc, &out);
  CHECK(s.IsInvalidArgument());
  CHECK(out == "keep");
}

TEST_CASE("the registry refuses taken names and ids and ids outside 1..15", "[serializer]") {
  SerializerRegistry registry;
  CHECK(registry.Register(std::make_unique<FakeSerializer>("a", 8)).ok());
  CHECK(registry.Register(std::make_unique<FakeSerializer>("a", 9)).IsInvalidArgument());
  CHECK(registry.Register(std::make_unique<FakeSerializer>("b", 8)).IsInvalidArgument());
  CHECK(registry.Register(std::make_unique<FakeSerializer>("c", 0)).IsInvalidArgument());
  CHECK(registry.Register(std::make_unique<FakeSerializer>("d", 16)).IsInvalidArgument());
  CHECK(registry.Register(nullptr).IsInvalidArgument());
  CHECK(registry.FindById(8)->name() == "a");
  CHECK(registry.Names().size() == 1);
}
