// The zstd compressor. Contexts are kept per thread (creating one allocates
// hundreds of kilobytes). Decompression streams into a BoundedOutput: a frame
// declaring more than the bound is refused from its header, a declared size
// within it is used only as a capped first allocation, and the decoder may not
// allocate a window larger than the bound.
#include <zstd.h>
#include <zstd_errors.h>

#include <memory>
#include <string>

#include "bounded_output.h"
#include "compressors.h"

namespace cachet {

namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_CCtx* ThreadCompressionContext() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> context(ZSTD_createCCtx());
  return context.get();
}

ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> context(ZSTD_createDCtx());
  return context.get();
}

// The smallest window a frame has: 2^10.
constexpr int kWindowLogMin = 10;

bool IsDeclared(unsigned long long size) {
  return size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR;
}

// The first allocation: the declared size when it is modest, else a multiple of
// the input; BoundedOutput grows it from there as real output arrives.
std::size_t FirstAllocation(std::size_t input_size, unsigned long long declared) {
  const std::size_t cap = input_size * 32 + 4096;
  if (!IsDeclared(declared)) return cap;
  return declared < cap ? static_cast<std::size_t>(declared) : cap;
}

// The largest window the decoder may allocate for output of at most `max_output`
// bytes: a frame never needs a window larger than its content.
int WindowLogMax(std::size_t max_output) {
  // Up to the largest window this zstd decodes (2^31 on 64 bits), so a bound
  // over 128 MiB lets in the frames that fit it, not only those the default takes.
  const int largest = ZSTD_dParam_getBounds(ZSTD_d_windowLogMax).upperBound;
  int log = kWindowLogMin;
  while (log < largest && (std::size_t{1} << log) < max_output) ++log;
  return log;
}

Status OutputTooLarge(std::size_t max_output) {
  return Status::TooLarge("zstd: decompressed value exceeds " + std::to_string(max_output) +
                          " bytes");
}

Status DeclaredTooLarge(unsigned long long declared, std::size_t max_output) {
  return Status::TooLarge("zstd: the frame declares " + std::to_string(declared) +
                          " bytes, over the bound of " + std::to_string(max_output));
}

Status DecoderError(std::size_t rc, std::size_t max_output) {
  if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
    return Status::TooLarge("zstd: the frame's window is larger than the bound of " +
                            std::to_string(max_output) + " bytes allows");
  }
  return Status::Corruption(std::string("zstd: ") + ZSTD_getErrorName(rc));
}

class ZstdCompressor final : public Compressor {
 public:
  explicit ZstdCompressor(int level) : level_(level) {}

  std::string_view name() const noexcept override { return "zstd"; }
  std::uint8_t id() const noexcept override { return 3; }

  Status Compress(std::string_view in, std::string* out) const override;
  Status Decompress(std::string_view in, std::size_t max_output, std::string* out) const override;

 private:
  int level_;
};

Status ZstdCompressor::Compress(std::string_view in, std::string* out) const {
  ZSTD_CCtx* context = ThreadCompressionContext();
  if (context == nullptr) return Status::Internal("zstd: cannot create a compression context");
  out->resize(ZSTD_compressBound(in.size()));
  const std::size_t n =
      ZSTD_compressCCtx(context, out->data(), out->size(), in.data(), in.size(), level_);
  if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
  out->resize(n);
  return Status::OK();
}

Status ZstdCompressor::Decompress(std::string_view in, std::size_t max_output,
                                  std::string* out) const {
  const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (IsDeclared(declared) && declared > max_output) return DeclaredTooLarge(declared, max_output);
  ZSTD_DCtx* context = ThreadDecompressionContext();
  if (context == nullptr) return Status::Internal("zstd: cannot create a decompression context");
  ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
  ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, WindowLogMax(max_output));
  BoundedOutput buffer(out, max_output, FirstAllocation(in.size(), declared));
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  // Bounded: every pass consumes input, produces output or grows the buffer
  // (which stops at the bound); a pass doing none of these is an error.
  for (;;) {
    if (buffer.free_size() == 0 && !buffer.Grow()) return OutputTooLarge(max_output);
    ZSTD_outBuffer output{buffer.free_begin(), buffer.free_size(), 0};
    const std::size_t consumed_before = input.pos;
    const std::size_t rc = ZSTD_decompressStream(context, &output, &input);
    buffer.Commit(output.pos);
    if (ZSTD_isError(rc)) return DecoderError(rc, max_output);
    const bool input_done = input.pos == input.size;
    if (rc == 0 && input_done) break;  // the last frame is complete
    const bool output_full = output.pos == output.size;
    if (input_done && !output_full) return Status::Corruption("zstd: truncated input");
    if (!output_full && output.pos == 0 && input.pos == consumed_before) {
      return Status::Corruption("zstd: the decoder made no progress");
    }
  }
  if (buffer.over_limit()) return OutputTooLarge(max_output);
  buffer.Finish();
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Compressor>> MakeZstdCompressor(int level) {
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()) {
    return Status::InvalidArgument("zstd level " + std::to_string(level) + " is outside " +
                                   std::to_string(ZSTD_minCLevel()) + ".." +
                                   std::to_string(ZSTD_maxCLevel()) + " (0 for the default)");
  }
  const int zstd_level = level == 0 ? ZSTD_CLEVEL_DEFAULT : level;
  return std::unique_ptr<Compressor>(std::make_unique<ZstdCompressor>(zstd_level));
}

}  // namespace cachet
