// Serializer: turns a structured value (a JSON document) into bytes and back.
//
// Built-ins: "json", "msgpack", "cbor". Each has a small id (1..15) that the Codec
// records with every value, so a reader decodes by what was written, never by
// today's config. Ids 1..7 are cachet's; 8..15 are free for applications.
//
// Serializers are stateless and thread-safe. The registry owns them and is never
// destroyed, so a `const Serializer*` from it stays valid for the whole process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachet/export.h"
#include "cachet/status.h"

namespace cachet {

// The structured value type of cachet's typed API.
using Json = nlohmann::json;

class CACHET_EXPORT Serializer {
 public:
  Serializer() = default;
  Serializer(const Serializer&) = delete;
  Serializer& operator=(const Serializer&) = delete;
  virtual ~Serializer();

  virtual std::string_view name() const noexcept = 0;
  virtual std::uint8_t id() const noexcept = 0;

  // Appends the encoding of `doc` to `*out`.
  virtual Status Serialize(const Json& doc, std::string* out) const = 0;
  // kCorruption (never an exception, never a partial document) for bad input.
  virtual Status Deserialize(std::string_view data, Json* doc) const = 0;
};

class CACHET_EXPORT SerializerRegistry {
 public:
  // The process-wide registry, with the built-ins registered. Never destroyed.
  static SerializerRegistry& Global();

  // kInvalidArgument if the name or id is taken, or the id is 0 or above 15.
  Status Register(std::unique_ptr<Serializer> serializer);

  // nullptr when unknown.
  const Serializer* Find(std::string_view name) const;
  const Serializer* FindById(std::uint8_t id) const;
  std::vector<std::string> Names() const;

  SerializerRegistry();
  ~SerializerRegistry();
  SerializerRegistry(const SerializerRegistry&) = delete;
  SerializerRegistry& operator=(const SerializerRegistry&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cachet
