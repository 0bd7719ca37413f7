// What the peers do to values that cachet's codec does for the Cache: Json text
// for structured values (as the json serializer) and zstd for compressed ones.
// Library exceptions stop here and become a Status.
#pragma once

#include <string>
#include <string_view>

#include "cachet/codec.h"
#include "cachet/status.h"

namespace cachet::bench {

Status SerializeJson(const Json& doc, std::string* out);
Status ParseJson(std::string_view text, Json* doc);
Status ZstdCompress(std::string_view input, std::string* out);
Status ZstdDecompress(std::string_view input, std::string* out);

}  // namespace cachet::bench
