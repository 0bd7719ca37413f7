// Redis Cluster key placement: hash slots, the slot map and redirections.
//
// A key lives in slot CRC16/XMODEM(key) mod 16384, where only the first
// non-empty {...} hash tag is hashed when the key has one, so "{user1}.name" and
// "{user1}.mail" share a slot. The slot map says which node serves each slot; it
// is built from a CLUSTER SHARDS reply (Redis 7.0+) or a CLUSTER SLOTS reply, in
// RESP2 or RESP3. A MOVED or ASK error names the node a slot went to.
//
// Over TLS: CLUSTER SHARDS lists a node's plain `port` and its `tls-port` (a
// TLS-only node has no `port`), so the caller says which one it connects to.
// CLUSTER SLOTS and MOVED/ASK name one port, which Redis 7 picks by the asking
// connection: the TLS port for a TLS client when the nodes run tls-cluster yes.
//
// A SlotMap is a value; it is not synchronized. The cluster client builds a new
// one on refresh and swaps it in.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/status.h"
#include "resp_reply.h"

namespace cachet::redis {

inline constexpr std::uint16_t kSlotCount = 16384;

// CRC16/XMODEM (polynomial 0x1021, initial value 0, no reflection), as Redis uses.
std::uint16_t Crc16Xmodem(std::string_view bytes) noexcept;

// The part of `key` that is hashed: the first non-empty {...} tag, else the key.
std::string_view HashTag(std::string_view key) noexcept;

// The cluster slot of `key`, 0..16383.
std::uint16_t KeySlot(std::string_view key) noexcept;

// A hash tag that lands in `slot`: the smallest decimal number whose CRC16 is
// in it, so "{" + SlotTag(s) + "}anything" lives in slot s. For keys that must
// share a slot with a key whose own bytes cannot be a tag (one with a '}').
// REQUIRES: slot < kSlotCount.
std::string SlotTag(std::uint16_t slot);

struct ClusterNode {
  std::string host;
  int port = 0;
  std::string id;  // empty when the reply did not say

  friend bool operator==(const ClusterNode& a, const ClusterNode& b) {
    return a.host == b.host && a.port == b.port;
  }
};

// Which of a node's ports the client connects to: `port`, or `tls-port` when
// the store's connections use TLS.
enum class NodePort : std::uint8_t { kPlain, kTls };

class SlotMap {
 public:
  static constexpr std::uint16_t kNoNode = UINT16_MAX;

  // From a CLUSTER SHARDS or CLUSTER SLOTS reply. `asked_host` replaces an empty
  // or unknown ("?") endpoint, which Redis sends to mean "the host you asked".
  // kProtocolError for a reply of the wrong shape. FromShards reads each
  // primary's `port` or `tls-port` as `port_kind` says; kUnavailable, naming the
  // field, when an online primary has no such port (a TLS client of nodes
  // without tls-cluster yes, or a plain client of TLS-only nodes).
  static Status FromShards(RespValue reply, std::string_view asked_host, NodePort port_kind,
                           SlotMap* out);
  static Status FromSlots(RespValue reply, std::string_view asked_host, SlotMap* out);

  // The primary serving `slot`, or nullptr when no node does.
  const ClusterNode* PrimaryFor(std::uint16_t slot) const noexcept;
  // Every primary, each once, in the order first seen.
  const std::vector<ClusterNode>& primaries() const noexcept { return primaries_; }
  // Slots that a node serves; 16384 when the cluster covers every slot.
  std::size_t covered_slots() const noexcept;

  // Points `slot` at `node` (after a MOVED), adding the node if it is new.
  void Assign(std::uint16_t slot, const ClusterNode& node);

 private:
  std::uint16_t IndexOf(const ClusterNode& node);
  Status AssignRange(std::int64_t first, std::int64_t last, const ClusterNode& node);

  std::vector<ClusterNode> primaries_;
  std::array<std::uint16_t, kSlotCount> owner_ = MakeEmptyOwners();

  static constexpr std::array<std::uint16_t, kSlotCount> MakeEmptyOwners() {
    std::array<std::uint16_t, kSlotCount> owners{};
    owners.fill(kNoNode);
    return owners;
  }
};

// A MOVED or ASK error: "MOVED 3999 127.0.0.1:6381".
struct Redirect {
  enum class Kind : std::uint8_t { kMoved, kAsk };
  Kind kind = Kind::kMoved;
  std::uint16_t slot = 0;
  ClusterNode node;
};

// Parses the text of an error reply. nullopt when it is not a well-formed MOVED
// or ASK. An empty host means the host of the node that answered (`asked_host`).
std::optional<Redirect> ParseRedirect(std::string_view error, std::string_view asked_host);

// What a cluster error reply asks the client to do. kNone for any other error.
enum class ClusterErrorKind : std::uint8_t {
  kNone,
  kMoved,        // MOVED slot host:port: the slot lives elsewhere now
  kAsk,          // ASK slot host:port: this one command goes there, after ASKING
  kTryAgain,     // TRYAGAIN: a multi-key command during a migration; retry soon
  kClusterDown,  // CLUSTERDOWN: the cluster cannot serve the slot now; back off
};
ClusterErrorKind ClassifyClusterError(std::string_view error) noexcept;

// Splits "host:port" (the port after the last ':', so IPv6 hosts work).
bool SplitHostPort(std::string_view address, std::string* host, int* port);

}  // namespace cachet::redis
