// Compressor: a byte-to-byte transform applied to large encoded values.
//
// Built-ins: "none" (id 0), "zlib" (1, RFC 1950), "gzip" (2, RFC 1952), "zstd" (3).
// Ids 1..7 are cachet's, 8..15 free for applications. The id is recorded with the
// value (codec.h), so decoding picks the compressor that wrote it.
//
// A Compressor is created with a level and is then immutable and thread-safe.
// Decompress is bounded: it never produces more than `max_output` bytes, nor
// allocates much more than that whatever the input claims, and answers
// kCorruption for truncated or garbled input, kTooLarge past the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet {

class CACHET_EXPORT Compressor {
 public:
  Compressor() = default;
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  virtual ~Compressor();

  virtual std::string_view name() const noexcept = 0;
  virtual std::uint8_t id() const noexcept = 0;

  // Replaces `*out` with the compressed form of `in`.
  virtual Status Compress(std::string_view in, std::string* out) const = 0;
  // Replaces `*out` with the original bytes.
  virtual Status Decompress(std::string_view in, std::size_t max_output,
                            std::string* out) const = 0;
};

class CACHET_EXPORT CompressorRegistry {
 public:
  // Makes a compressor; `level` 0 means the library's default level.
  using Factory = std::function<Result<std::unique_ptr<Compressor>>(int level)>;

  // The process-wide registry, with the built-ins registered. Never destroyed.
  static CompressorRegistry& Global();

  Status Register(std::string_view name, std::uint8_t id, Factory factory);

  // kInvalidArgument for an unknown name or a level the compressor rejects.
  Result<std::unique_ptr<Compressor>> Create(std::string_view name, int level = 0) const;
  // A shared default-level instance for decoding; nullptr when unknown.
  const Compressor* FindById(std::uint8_t id) const;
  std::vector<std::string> Names() const;

  CompressorRegistry();
  ~CompressorRegistry();
  CompressorRegistry(const CompressorRegistry&) = delete;
  CompressorRegistry& operator=(const CompressorRegistry&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cachet
