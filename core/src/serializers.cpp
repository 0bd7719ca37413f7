// The built-in serializers, all three through nlohmann::json: JSON text,
// MessagePack and CBOR. Writing refuses what would not read back as written
// (CheckWritable) and catches nlohmann's exceptions (a string that is not UTF-8
// cannot become JSON text); reading goes through ReadDocument, which
// never throws and bounds the nesting depth.
#include "serializers.h"

#include <cmath>
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

// Why `node`, at `depth` containers down, would not read back as it is: nested
// deeper than a reader takes, or, as JSON text (`text`), holding a number that
// is not finite (dump() writes null) or binary bytes (dump() writes an object);
// nullptr when it would. Recursion is bounded by kMaxDocumentDepth; nothing is
// allocated unless the document is refused.
static_assert(kMaxDocumentDepth == 512, "Unwritable's message names the depth");
const char* Unwritable(const Json& node, std::size_t depth, bool text) {
  if (node.is_structured()) {
    if (depth + 1 > kMaxDocumentDepth) return "nested deeper than 512 levels, which no reader takes";
    for (const Json& child : node) {
      if (const char* why = Unwritable(child, depth + 1, text)) return why;
    }
    return nullptr;
  }
  if (!text) return nullptr;
  if (node.is_number_float() && !std::isfinite(node.get<double>())) {
    return "JSON has no NaN or infinity (msgpack and cbor do)";
  }
  if (node.is_binary()) return "JSON has no binary values (msgpack and cbor do)";
  return nullptr;
}

Status CheckWritable(std::string_view format, const Json& doc, bool text) {
  const char* why = Unwritable(doc, 0, text);
  if (why == nullptr) return Status::OK();
  return Status::InvalidArgument(std::string(format) + ": cannot serialize the document: " + why);
}

class JsonSerializer final : public Serializer {
 public:
  std::string_view name() const noexcept override { return "json"; }
  std::uint8_t id() const noexcept override { return kJsonSerializerId; }

  Status Serialize(const Json& doc, std::string* out) const override {
    if (Status s = CheckWritable(name(), doc, /*text=*/true); !s.ok()) return s;
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
    if (Status s = CheckWritable(name(), doc, /*text=*/false); !s.ok()) return s;
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
    if (Status s = CheckWritable(name(), doc, /*text=*/false); !s.ok()) return s;
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
