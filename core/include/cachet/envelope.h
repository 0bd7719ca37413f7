// Envelope: flags and expiry kept inside the value, for stores without them.
//
// Stores without native flags (Redis, Tokyo Tyrant) or native TTL (Tokyo Tyrant)
// are wrapped by WithEnvelope(): values that need it are stored as a small header
// (magic, version, flags, expiry time, a checksum of the header) followed by the
// value bytes. A value with flags 0 and no emulated expiry is stored raw, so other
// clients read it as it is, and a raw value that starts with the magic is
// enveloped so it reads back unchanged. Only a header whose checksum matches is
// taken as an envelope: another program's bytes that merely start with the magic
// read back raw. An expired value is a miss; a read never removes anything, and the
// next write overwrites it. The layout is in docs/value-format.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/export.h"
#include "cachet/item.h"
#include "cachet/status.h"

namespace cachet {

struct EnvelopeHeader {
  std::uint32_t flags = 0;
  std::uint64_t expires_at_ms = 0;  // Unix time in ms; 0: never
};

// Appends header and value to `*out`.
CACHET_EXPORT void EncodeEnvelope(const EnvelopeHeader& header, std::string_view value,
                                  std::string* out);
// True when `stored` begins with a whole envelope header: magic, version and a
// matching checksum.
CACHET_EXPORT bool HasEnvelope(std::string_view stored) noexcept;
// Splits an enveloped value. kCorruption, saying why, when HasEnvelope() is false.
CACHET_EXPORT Status DecodeEnvelope(std::string_view stored, EnvelopeHeader* header,
                                    std::string_view* value);

// Returns `inner` itself when it has native flags and TTL, else a Backend that
// emulates what is missing. capabilities() of the wrapper report the emulated
// ones as present; EmulatedCapabilities() tells which they are.
CACHET_EXPORT std::shared_ptr<Backend> WithEnvelope(std::shared_ptr<Backend> inner);
CACHET_EXPORT Capabilities EmulatedCapabilities(const Backend& backend) noexcept;
// What a store that declares `native` can do through a Cache: the envelope adds
// flags and TTL where they are missing, and touch and get_and_touch where it
// rewrites the expiry with CAS; without CAS, a store without native TTL loses
// them (the expiry lives in the value). The same as capabilities() of
// WithEnvelope's Backend, without making one (`cachet plugins` lists it).
CACHET_EXPORT Capabilities CapabilitiesThroughCache(Capabilities native) noexcept;

}  // namespace cachet
