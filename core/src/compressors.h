// The built-in compressors: none (id 0), zlib (1, RFC 1950), gzip (2, RFC 1952)
// and zstd (3). Each factory takes a level, 0 meaning the library's default, and
// answers kInvalidArgument for a level the library does not accept.
#pragma once

#include <memory>

#include "cachet/compressor.h"
#include "cachet/result.h"

namespace cachet {

Result<std::unique_ptr<Compressor>> MakeNoneCompressor(int level);
Result<std::unique_ptr<Compressor>> MakeZlibCompressor(int level);
Result<std::unique_ptr<Compressor>> MakeGzipCompressor(int level);
Result<std::unique_ptr<Compressor>> MakeZstdCompressor(int level);

// Registers the four built-ins. Called once by CompressorRegistry::Global().
void RegisterBuiltinCompressors(CompressorRegistry& registry);

}  // namespace cachet
