// The built-in serializers: json (id 1), msgpack (id 2) and cbor (id 3).
#pragma once

#include "cachet/serializer.h"

namespace cachet {

// The json serializer's id: the one text encoding, which the Codec treats apart
// (flags-0 bytes may be JSON text; other encodings read any bytes as something).
inline constexpr std::uint8_t kJsonSerializerId = 1;

// Registers the built-ins into `registry`. Called once by SerializerRegistry::Global().
void RegisterBuiltinSerializers(SerializerRegistry& registry);

}  // namespace cachet
