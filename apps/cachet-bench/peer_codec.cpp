// Json text and zstd frames for the peers.
#include "peer_codec.h"

#include <zstd.h>

#include <exception>

namespace cachet::bench {
namespace {

// The largest value a benchmark ever reads back; guards against a bad frame.
constexpr unsigned long long kMaxDecompressed = 64ull << 20;

}  // namespace

Status SerializeJson(const Json& doc, std::string* out) {
  try {
    *out = doc.dump();
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
}

Status ParseJson(std::string_view text, Json* doc) {
  try {
    *doc = Json::parse(text.begin(), text.end());
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::Corruption(e.what());
  }
}

Status ZstdCompress(std::string_view input, std::string* out) {
  out->resize(ZSTD_compressBound(input.size()));
  const std::size_t size =
      ZSTD_compress(out->data(), out->size(), input.data(), input.size(), ZSTD_CLEVEL_DEFAULT);
  if (ZSTD_isError(size)) return Status::Internal(ZSTD_getErrorName(size));
  out->resize(size);
  return Status::OK();
}

Status ZstdDecompress(std::string_view input, std::string* out) {
  const unsigned long long size = ZSTD_getFrameContentSize(input.data(), input.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
      size > kMaxDecompressed) {
    return Status::Corruption("not a zstd frame of known size");
  }
  out->resize(size);
  const std::size_t got = ZSTD_decompress(out->data(), out->size(), input.data(), input.size());
  if (ZSTD_isError(got) || got != size) return Status::Corruption("bad zstd frame");
  return Status::OK();
}

}  // namespace cachet::bench
