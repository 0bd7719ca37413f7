// ReadDocument: parses JSON, MessagePack or CBOR into a Json document safely.
//
// nlohmann's binary readers recurse once per nesting level, so a few hundred
// kilobytes of nested array markers could overflow the stack. ReadDocument builds
// the document through a SAX handler that stops past kMaxDocumentDepth, and
// reports every failure as a Status instead of an exception.
#pragma once

#include <cstddef>
#include <string_view>

#include "cachet/serializer.h"
#include "cachet/status.h"

namespace cachet {

enum class DocumentFormat { kJson, kMsgpack, kCbor };

// Deeper documents are refused; real cache values are nowhere near this.
inline constexpr std::size_t kMaxDocumentDepth = 512;

// kCorruption naming the format and the reason for input that does not parse,
// has trailing bytes, or nests deeper than kMaxDocumentDepth. `*doc` is left
// unchanged on failure.
Status ReadDocument(std::string_view data, DocumentFormat format, Json* doc);

}  // namespace cachet
