// The zlib (RFC 1950) and gzip (RFC 1952) compressors: one deflate stream with
// the two framings zlib's window_bits select. Decompression streams into a
// BoundedOutput, so neither a bomb nor a lying header can exhaust memory.
#include <zlib.h>

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "bounded_output.h"
#include "compressors.h"

namespace cachet {

namespace {

constexpr int kZlibWindowBits = 15;       // 32 KiB window, zlib framing
constexpr int kGzipWindowBits = 15 + 16;  // the same window, gzip framing

// Deflate and inflate streams are kept per thread and reset between uses:
// initializing one allocates about 256 KiB (deflate) or 40 KiB (inflate), which
// would otherwise be mapped and unmapped on every value.
struct DeflateStream {
  z_stream stream{};
  ~DeflateStream() { deflateEnd(&stream); }
};
struct InflateStream {
  z_stream stream{};
  ~InflateStream() { inflateEnd(&stream); }
};

// A reset deflate stream for this framing and level; nullptr if zlib cannot make one.
// At most 2 framings x 10 levels are ever cached per thread.
z_stream* ThreadDeflateStream(int window_bits, int level) {
  thread_local std::map<std::pair<int, int>, std::unique_ptr<DeflateStream>> streams;
  std::unique_ptr<DeflateStream>& slot = streams[{window_bits, level}];
  if (slot != nullptr) {
    deflateReset(&slot->stream);
    return &slot->stream;
  }
  auto fresh = std::make_unique<DeflateStream>();
  if (deflateInit2(&fresh->stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return nullptr;
  }
  slot = std::move(fresh);
  return &slot->stream;
}

// A reset inflate stream for this framing; nullptr if zlib cannot make one.
z_stream* ThreadInflateStream(int window_bits) {
  thread_local std::map<int, std::unique_ptr<InflateStream>> streams;
  std::unique_ptr<InflateStream>& slot = streams[window_bits];
  if (slot != nullptr) {
    inflateReset(&slot->stream);
    return &slot->stream;
  }
  auto fresh = std::make_unique<InflateStream>();
  if (inflateInit2(&fresh->stream, window_bits) != Z_OK) return nullptr;
  slot = std::move(fresh);
  return &slot->stream;
}

class DeflateCompressor final : public Compressor {
 public:
  DeflateCompressor(std::string_view name, std::uint8_t id, int window_bits, int level)
      : name_(name), id_(id), window_bits_(window_bits), level_(level) {}

  std::string_view name() const noexcept override { return name_; }
  std::uint8_t id() const noexcept override { return id_; }

  Status Compress(std::string_view in, std::string* out) const override;
  Status Decompress(std::string_view in, std::size_t max_output, std::string* out) const override;

 private:
  Status Failure(const z_stream& stream, int rc, std::string_view what) const {
    std::string msg(name_);
    msg += ": ";
    msg += what;
    msg += ": ";
    msg += stream.msg != nullptr ? stream.msg : zError(rc);
    return Status::Corruption(msg);
  }

  Status TooLarge(std::size_t max_output) const {
    return Status::TooLarge(std::string(name_) + ": decompressed value exceeds " +
                            std::to_string(max_output) + " bytes");
  }

  std::string_view name_;
  std::uint8_t id_;
  int window_bits_;
  int level_;
};

Status DeflateCompressor::Compress(std::string_view in, std::string* out) const {
  if (in.size() > UINT_MAX) return Status::TooLarge(std::string(name_) + ": input over 4 GiB");
  z_stream* deflater = ThreadDeflateStream(window_bits_, level_);
  if (deflater == nullptr) return Status::Internal(std::string(name_) + ": deflateInit2 failed");
  z_stream& stream = *deflater;
  out->resize(deflateBound(&stream, static_cast<uLong>(in.size())));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  stream.next_out = reinterpret_cast<Bytef*>(out->data());
  stream.avail_out = static_cast<uInt>(out->size());
  // deflateBound leaves room for the whole stream, so one Z_FINISH call ends it.
  const int rc = deflate(&stream, Z_FINISH);
  if (rc != Z_STREAM_END) return Status::Internal(std::string(name_) + ": deflate did not finish");
  out->resize(stream.total_out);
  return Status::OK();
}

Status DeflateCompressor::Decompress(std::string_view in, std::size_t max_output,
                                     std::string* out) const {
  if (in.size() > UINT_MAX) return Status::TooLarge(std::string(name_) + ": input over 4 GiB");
  z_stream* inflater = ThreadInflateStream(window_bits_);
  if (inflater == nullptr) return Status::Internal(std::string(name_) + ": inflateInit2 failed");
  z_stream& stream = *inflater;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  BoundedOutput buffer(out, max_output, in.size() * 4);
  // Bounded: every pass consumes input, produces output or grows the buffer,
  // and the buffer stops growing at the bound.
  for (;;) {
    if (buffer.free_size() == 0 && !buffer.Grow()) return TooLarge(max_output);
    const uInt room = static_cast<uInt>(std::min<std::size_t>(buffer.free_size(), UINT_MAX));
    stream.next_out = reinterpret_cast<Bytef*>(buffer.free_begin());
    stream.avail_out = room;
    const int rc = inflate(&stream, Z_NO_FLUSH);
    buffer.Commit(room - stream.avail_out);
    if (rc == Z_STREAM_END) {
      if (stream.avail_in != 0) return Status::Corruption(std::string(name_) + ": trailing bytes");
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && stream.avail_in == 0) return Failure(stream, rc, "truncated input");
    if (rc == Z_BUF_ERROR) continue;  // the output is full: grow it on the next pass
    return Failure(stream, rc, "bad input");
  }
  if (buffer.over_limit()) return TooLarge(max_output);
  buffer.Finish();
  return Status::OK();
}

Status ValidateDeflateLevel(std::string_view name, int level) {
  if (level >= 0 && level <= 9) return Status::OK();
  return Status::InvalidArgument(std::string(name) + " level " + std::to_string(level) +
                                 " is outside 1..9 (0 for the default)");
}

Result<std::unique_ptr<Compressor>> MakeDeflate(std::string_view name, std::uint8_t id,
                                                int window_bits, int level) {
  Status s = ValidateDeflateLevel(name, level);
  if (!s.ok()) return s;
  const int zlib_level = level == 0 ? Z_DEFAULT_COMPRESSION : level;
  return std::unique_ptr<Compressor>(
      std::make_unique<DeflateCompressor>(name, id, window_bits, zlib_level));
}

}  // namespace

Result<std::unique_ptr<Compressor>> MakeZlibCompressor(int level) {
  return MakeDeflate("zlib", 1, kZlibWindowBits, level);
}

Result<std::unique_ptr<Compressor>> MakeGzipCompressor(int level) {
  return MakeDeflate("gzip", 2, kGzipWindowBits, level);
}

}  // namespace cachet
