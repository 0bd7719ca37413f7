// The "none" compressor: the identity, still bounded on the way out so that a
// value is never larger than the caller allows.
#include <string>

#include "compressors.h"

namespace cachet {

namespace {

class NoneCompressor final : public Compressor {
 public:
  std::string_view name() const noexcept override { return "none"; }
  std::uint8_t id() const noexcept override { return 0; }

  Status Compress(std::string_view in, std::string* out) const override {
    out->assign(in);
    return Status::OK();
  }
  Status Decompress(std::string_view in, std::size_t max_output, std::string* out) const override {
    if (in.size() > max_output) {
      return Status::TooLarge("none: value of " + std::to_string(in.size()) + " bytes exceeds " +
                              std::to_string(max_output));
    }
    out->assign(in);
    return Status::OK();
  }
};

}  // namespace

Result<std::unique_ptr<Compressor>> MakeNoneCompressor(int level) {
  if (level != 0) {
    return Status::InvalidArgument("compressor none takes no level (got " + std::to_string(level) +
                                   ")");
  }
  return std::unique_ptr<Compressor>(std::make_unique<NoneCompressor>());
}

}  // namespace cachet
