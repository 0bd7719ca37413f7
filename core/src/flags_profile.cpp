// The three flags layouts. Perl's and Python's bit meanings are those of
// Cache::Memcached(::Fast) and of pymemcache, python-memcached and pylibmc.
#include "flags_profile.h"

#include <string>

namespace cachet {

namespace {

constexpr std::uint8_t kZlibId = 1;
constexpr std::uint8_t kGzipId = 2;

// Cachet: bits 0..3 kind, 4..7 serializer id, 8..11 compressor id.
constexpr std::uint32_t kCachetKnownBits = 0xFFF;

// Perl Cache::Memcached and Cache::Memcached::Fast.
constexpr std::uint32_t kPerlStorable = 1;
constexpr std::uint32_t kPerlGzip = 2;
constexpr std::uint32_t kPerlUtf8 = 4;

// Python pymemcache, python-memcached and pylibmc.
constexpr std::uint32_t kPythonPickle = 1;
constexpr std::uint32_t kPythonInteger = 2;
constexpr std::uint32_t kPythonLong = 4;
constexpr std::uint32_t kPythonZlib = 8;
constexpr std::uint32_t kPythonText = 16;

std::string FlagsPrefix(std::uint32_t flags) { return "flags " + std::to_string(flags) + ": "; }

Status UnknownBits(std::uint32_t flags, std::uint32_t unknown, std::string_view profile) {
  return Status::Unsupported(FlagsPrefix(flags) + "bits " + std::to_string(unknown) +
                             " mean nothing in the " + std::string(profile) +
                             " flags profile (written by another client or a newer cachet)");
}

Status CachetLayout(std::uint32_t flags, ValueLayout* layout) {
  if ((flags & ~kCachetKnownBits) != 0)
    return UnknownBits(flags, flags & ~kCachetKnownBits, "cachet");
  const std::uint32_t kind = flags & 0xF;
  const auto serializer_id = static_cast<std::uint8_t>((flags >> 4) & 0xF);
  if (kind > static_cast<std::uint32_t>(ValueKind::kDocument)) {
    return Status::Unsupported(FlagsPrefix(flags) + "value kind " + std::to_string(kind) +
                               " is unknown to this cachet");
  }
  layout->kind = static_cast<ValueKind>(kind);
  const bool is_document = layout->kind == ValueKind::kDocument;
  if (is_document != (serializer_id != 0)) {
    return Status::Corruption(FlagsPrefix(flags) + "serializer id " +
                              std::to_string(serializer_id) + " does not fit value kind " +
                              std::to_string(kind));
  }
  layout->serializer_id = serializer_id;
  layout->compressor_id = static_cast<std::uint8_t>((flags >> 8) & 0xF);
  return Status::OK();
}

Status PerlLayout(std::uint32_t flags, ValueLayout* layout) {
  if ((flags & kPerlStorable) != 0) {
    return Status::Unsupported(FlagsPrefix(flags) + "a Perl Storable value cannot be read by C++");
  }
  const std::uint32_t unknown = flags & ~(kPerlGzip | kPerlUtf8);
  if (unknown != 0) return UnknownBits(flags, unknown, "perl");
  // UTF-8 text and plain bytes are the same bytes to C++.
  *layout = ValueLayout{ValueKind::kBytes, 0, (flags & kPerlGzip) != 0 ? kGzipId : std::uint8_t{0}};
  return Status::OK();
}

Status PythonLayout(std::uint32_t flags, ValueLayout* layout) {
  if ((flags & kPythonPickle) != 0) {
    return Status::Unsupported(FlagsPrefix(flags) + "a Python pickle value cannot be read by C++");
  }
  const std::uint32_t known = kPythonInteger | kPythonLong | kPythonZlib | kPythonText;
  if ((flags & ~known) != 0) return UnknownBits(flags, flags & ~known, "python");
  const bool integer = (flags & (kPythonInteger | kPythonLong)) != 0;
  if (integer && (flags & kPythonText) != 0) {
    return Status::Corruption(FlagsPrefix(flags) + "a value cannot be both integer and text");
  }
  *layout = ValueLayout{integer ? ValueKind::kInteger : ValueKind::kBytes, 0,
                        (flags & kPythonZlib) != 0 ? kZlibId : std::uint8_t{0}};
  return Status::OK();
}

std::uint32_t PerlFlags(const ValueLayout& layout) {
  return layout.compressor_id == kGzipId ? kPerlGzip : 0;
}

std::uint32_t PythonFlags(const ValueLayout& layout) {
  std::uint32_t flags = 0;
  // Python reads a bool written as 1 or 0 with the integer flag as the int 1 or 0.
  if (layout.kind == ValueKind::kInteger || layout.kind == ValueKind::kBool) {
    flags |= kPythonInteger;
  }
  if (layout.compressor_id == kZlibId) flags |= kPythonZlib;
  return flags;
}

std::uint32_t CachetFlags(const ValueLayout& layout) {
  return static_cast<std::uint32_t>(layout.kind) |
         static_cast<std::uint32_t>(layout.serializer_id & 0xF) << 4 |
         static_cast<std::uint32_t>(layout.compressor_id & 0xF) << 8;
}

}  // namespace

std::uint32_t FlagsFor(FlagsProfile profile, const ValueLayout& layout) {
  switch (profile) {
    case FlagsProfile::kCachet:
      return CachetFlags(layout);
    case FlagsProfile::kPerl:
      return PerlFlags(layout);
    case FlagsProfile::kPython:
      return PythonFlags(layout);
  }
  return 0;
}

Status LayoutOf(FlagsProfile profile, std::uint32_t flags, ValueLayout* layout) {
  switch (profile) {
    case FlagsProfile::kCachet:
      return CachetLayout(flags, layout);
    case FlagsProfile::kPerl:
      return PerlLayout(flags, layout);
    case FlagsProfile::kPython:
      return PythonLayout(flags, layout);
  }
  return Status::Internal("unknown flags profile");
}

bool ProfileRecordsCompressor(FlagsProfile profile, std::uint8_t compressor_id) {
  if (compressor_id == 0) return true;
  switch (profile) {
    case FlagsProfile::kCachet:
      return compressor_id <= 15;
    case FlagsProfile::kPerl:
      return compressor_id == kGzipId;
    case FlagsProfile::kPython:
      return compressor_id == kZlibId;
  }
  return false;
}

}  // namespace cachet
