// Encoding and decoding of GetOrCompute's record header (layout in
// computed_record.h), byte by byte so it does not depend on the host's endianness.
#include "computed_record.h"

#include <algorithm>

#include "header_bytes.h"

namespace cachet {

namespace {

constexpr std::size_t kChecksumOffset = 20;

}  // namespace

void EncodeComputedRecord(const ComputedRecord& record, std::string_view value, std::string* out) {
  const std::size_t start = out->size();
  out->reserve(start + kComputedHeaderSize + value.size());
  out->append(kComputedMagic);
  out->push_back(static_cast<char>(kComputedVersion));
  out->push_back(static_cast<char>(record.kind));
  out->append(3, '\0');
  AppendLittleEndian(record.fresh_until_ms, out);
  AppendLittleEndian(record.load_ms, out);
  AppendLittleEndian(HeaderChecksum(std::string_view(*out).substr(start), kChecksumOffset), out);
  out->append(value);
}

bool DecodeComputedRecord(std::string_view stored, ComputedRecord* record,
                          std::string_view* value) noexcept {
  if (stored.size() < kComputedHeaderSize || !stored.starts_with(kComputedMagic) ||
      static_cast<std::uint8_t>(stored[3]) != kComputedVersion ||
      ReadLittleEndian<std::uint32_t>(stored.substr(kChecksumOffset)) != HeaderChecksum(stored, kChecksumOffset)) {
    return false;
  }
  const auto kind = static_cast<std::uint8_t>(stored[4]);
  if (kind > static_cast<std::uint8_t>(ComputedRecord::Kind::kNotFound)) return false;
  record->kind = static_cast<ComputedRecord::Kind>(kind);
  record->fresh_until_ms = ReadLittleEndian<std::uint64_t>(stored.substr(8));
  record->load_ms = ReadLittleEndian<std::uint32_t>(stored.substr(16));
  *value = stored.substr(kComputedHeaderSize);
  return true;
}

bool BeginsLikeComputedRecord(std::string_view bytes, bool as_prefix) noexcept {
  if (as_prefix && !bytes.empty() && bytes.size() < kComputedHeaderSize) {
    const std::size_t n = std::min(bytes.size(), kComputedMagic.size());
    return bytes.substr(0, n) == kComputedMagic.substr(0, n);
  }
  ComputedRecord record;
  std::string_view value;
  return DecodeComputedRecord(bytes, &record, &value);
}

Status ComputedRecordRefused() {
  return Status::InvalidArgument(
      "value begins with GetOrCompute's record header (bytes CA CE 7C and a matching checksum) "
      "and would read back altered; docs/get-or-compute.md");
}

Status JoinableRecord(const Status& read, std::string_view stored, bool prepend) {
  if (read.IsNotFound()) return Status::OK();
  if (!read.ok()) return read;
  ComputedRecord record;
  std::string_view value;
  if (!DecodeComputedRecord(stored, &record, &value)) return Status::OK();
  if (prepend) {
    return Status::Unsupported(
        "prepend onto a value GetOrCompute stored with its record (stale_ms, early_refresh, "
        "negative_ttl) would bury the record: write the whole value instead");
  }
  if (record.kind == ComputedRecord::Kind::kNotFound) {
    return Status::NotStored("append onto a miss GetOrCompute cached (negative_ttl)");
  }
  return Status::OK();  // appended bytes extend the record's value
}

Status OpenStoredRecord(Item* item) {
  ComputedRecord record;
  std::string_view value;
  if (!DecodeComputedRecord(item->value, &record, &value)) return Status::OK();
  if (record.kind == ComputedRecord::Kind::kNotFound) return Status::NotFound();
  item->value.erase(0, kComputedHeaderSize);
  return Status::OK();
}

}  // namespace cachet
