// The built-in serializers, all three through nlohmann::json: JSON text,
// MessagePack and CBOR. Writing catches nlohmann's exceptions (a string that is
// not UTF-8 cannot become JSON text); reading goes through ReadDocument, which
// never throws and bounds the nesting depth.
#include "serializers.h"

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "document_reader.h"

namespace cachet {

namespace {

// Runs `write`, which appends to `*out`. On an exception, `*out` is cut back to
// what it held before, and the failure is kInvalidArgument: a document that
// cannot be written is the caller's value, not stored data.
template <class Write>
Status AppendGuarded(std::string_view format, std::string* out, Write write) {
  const std::size_t old_size = out->size();
  try {
    write();
  } catch (const std::exception& e) {
    out->resize(old_size);
    std::string msg(format);
    msg += ": cannot serialize the document: ";
    msg += e.what();
    return Status::InvalidArgument(msg);
  }
  return Status::OK();
}

class JsonSerializer final : public Serializer {
 public:
  std::string_view name() const noexcept override { return "json"; }
  std::uint8_t id() const noexcept override { return 1; }

  Status Serialize(const Json& doc, std::string* out) const override {
    return AppendGuarded(name(), out, [&] { out->append(doc.dump()); });
  }
  Status Deserialize(std::string_view data, Json* doc) const override {
    return ReadDocument(data, DocumentFormat::kJson, doc);
  }
};

class MsgpackSerializer final : public Serializer {
 public:
  std::string_view name() const noexcept override { return "msgpack"; }
  std::uint8_t id() const noexcept override { return 2; }

  Status Serialize(const Json& doc, std::string* out) const override {
    return AppendGuarded(
        name(), out, [&] { Json::to_msgpack(doc, nlohmann::detail::output_adapter<char>(*out)); });
  }
  Status Deserialize(std::string_view data, Json* doc) const override {
    return ReadDocument(data, DocumentFormat::kMsgpack, doc);
  }
};

class CborSerializer final : public Serializer {
 public:
  std::string_view name() const noexcept override { return "cbor"; }
  std::uint8_t id() const noexcept override { return 3; }

  Status Serialize(const Json& doc, std::string* out) const override {
    return AppendGuarded(name(), out,
                         [&] { Json::to_cbor(doc, nlohmann::detail::output_adapter<char>(*out)); });
  }
  Status Deserialize(std::string_view data, Json* doc) const override {
    return ReadDocument(data, DocumentFormat::kCbor, doc);
  }
};

}  // namespace

void RegisterBuiltinSerializers(SerializerRegistry& registry) {
  // The registry is empty and the names and ids distinct, so these cannot fail.
  (void)registry.Register(std::make_unique<JsonSerializer>());
  (void)registry.Register(std::make_unique<MsgpackSerializer>());
  (void)registry.Register(std::make_unique<CborSerializer>());
}

}  // namespace cachet
