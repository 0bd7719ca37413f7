// The built-in serializers: json (id 1), msgpack (id 2) and cbor (id 3).
#pragma once

#include "cachet/serializer.h"

namespace cachet {

// Registers the built-ins into `registry`. Called once by SerializerRegistry::Global().
void RegisterBuiltinSerializers(SerializerRegistry& registry);

}  // namespace cachet
