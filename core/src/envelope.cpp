// Encoding and decoding of the envelope header (layout in envelope_format.h),
// byte by byte so the result does not depend on the host's endianness.
#include "cachet/envelope.h"

#include <string>

#include "envelope_format.h"
#include "header_bytes.h"

namespace cachet {

void EncodeEnvelope(const EnvelopeHeader& header, std::string_view value, std::string* out) {
  out->reserve(out->size() + kEnvelopeHeaderSize + value.size());
  out->append(kEnvelopeMagic);
  out->push_back(static_cast<char>(kEnvelopeVersion));
  AppendLittleEndian(header.flags, out);
  AppendLittleEndian(header.expires_at_ms, out);
  const std::string_view written(out->data() + out->size() - kEnvelopeChecksumOffset,
                                 kEnvelopeChecksumOffset);
  AppendLittleEndian(HeaderChecksum(written, kEnvelopeChecksumOffset), out);
  out->append(value);
}

bool HasEnvelope(std::string_view stored) noexcept {
  return stored.size() >= kEnvelopeHeaderSize && stored.starts_with(kEnvelopeMagic) &&
         static_cast<std::uint8_t>(stored[kEnvelopeMagic.size()]) == kEnvelopeVersion &&
         ReadLittleEndian<std::uint32_t>(stored.substr(kEnvelopeChecksumOffset)) ==
             HeaderChecksum(stored, kEnvelopeChecksumOffset);
}

bool ReadEnvelopeHeader(std::string_view stored, EnvelopeHeader* header) noexcept {
  if (!HasEnvelope(stored)) return false;
  header->flags = ReadLittleEndian<std::uint32_t>(stored.substr(4, 4));
  header->expires_at_ms = ReadLittleEndian<std::uint64_t>(stored.substr(8, 8));
  return true;
}

Status DecodeEnvelope(std::string_view stored, EnvelopeHeader* header, std::string_view* value) {
  if (!ReadEnvelopeHeader(stored, header)) {
    // Worded on this path only: the reason the bytes are not an envelope.
    if (!stored.starts_with(kEnvelopeMagic)) {
      return Status::Corruption("envelope: the magic bytes are missing");
    }
    if (stored.size() < kEnvelopeHeaderSize) {
      return Status::Corruption("envelope: header truncated at " + std::to_string(stored.size()) +
                                " of " + std::to_string(kEnvelopeHeaderSize) + " bytes");
    }
    const auto version = static_cast<std::uint8_t>(stored[kEnvelopeMagic.size()]);
    if (version != kEnvelopeVersion) {
      return Status::Corruption("envelope: unknown version " + std::to_string(version));
    }
    return Status::Corruption("envelope: the header checksum does not match");
  }
  *value = stored.substr(kEnvelopeHeaderSize);
  return Status::OK();
}

}  // namespace cachet
