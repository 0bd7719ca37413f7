// Hash slots, the slot map built from CLUSTER SHARDS / CLUSTER SLOTS, and MOVED/ASK.
#include "cluster_slots.h"

#include <algorithm>

#include <charconv>
#include <system_error>

namespace cachet::redis {

namespace {

constexpr std::array<std::uint16_t, 256> MakeCrc16Table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<std::uint16_t, 256> kCrc16Table = MakeCrc16Table();

bool ParseDecimal(std::string_view text, std::int64_t* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

// Numbers come as integers, or as strings in some versions and proxies.
bool AsNumber(RespValue value, std::int64_t* number) {
  if (value.type() == RespType::kInteger) {
    *number = value.integer();
    return true;
  }
  return value.IsString() && ParseDecimal(value.text(), number);
}

std::string EndpointHost(std::string_view endpoint, std::string_view ip,
                         std::string_view asked_host) {
  if (!endpoint.empty() && endpoint != "?") return std::string(endpoint);
  if (!ip.empty() && ip != "?") return std::string(ip);
  return std::string(asked_host);
}

Status BadReply(std::string_view command, std::string_view why) {
  return Status::ProtocolError("unexpected CLUSTER " + std::string(command) +
                               " reply: " + std::string(why));
}

const char* PortField(NodePort port_kind) {
  return port_kind == NodePort::kTls ? "tls-port" : "port";
}

// The online primary of one CLUSTER SHARDS entry, read into *primary: kOk, or
// kNotFound when the shard has none; kUnavailable when it has one without the
// port `port_kind` names, since no connection this client makes could reach it.
Status ShardPrimary(RespValue nodes, std::string_view asked_host, NodePort port_kind,
                    ClusterNode* primary) {
  for (RespValue node : nodes) {
    RespValue role = node, health = node, port = node, ip = node, endpoint = node, id = node;
    if (!node.FindField("role", &role) || role.text() != "master") continue;
    if (node.FindField("health", &health) && health.text() != "online") continue;
    std::string_view ip_text = node.FindField("ip", &ip) ? ip.text() : std::string_view();
    std::string_view endpoint_text =
        node.FindField("endpoint", &endpoint) ? endpoint.text() : std::string_view();
    primary->host = EndpointHost(endpoint_text, ip_text, asked_host);
    primary->id = node.FindField("id", &id) ? std::string(id.text()) : std::string();
    std::int64_t port_number = 0;
    // Port 0: the node does not listen that way (a TLS-only node's plain port).
    if (!node.FindField(PortField(port_kind), &port) || !AsNumber(port, &port_number) ||
        port_number == 0) {
      return Status::Unavailable(
          "CLUSTER SHARDS gives no " + std::string(PortField(port_kind)) + " for primary " +
          primary->host + (primary->id.empty() ? "" : " (" + primary->id + ")") +
          (port_kind == NodePort::kTls
               ? ": a client over TLS needs nodes with a tls-port and tls-cluster yes"
               : ": it takes TLS connections only; set tls = true"));
    }
    // Out of range stays out of range (AssignRange refuses it), never wrapped.
    primary->port = static_cast<int>(std::clamp<std::int64_t>(port_number, -1, 65536));
    return Status::OK();
  }
  return Status::NotFound();
}

}  // namespace

std::uint16_t Crc16Xmodem(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  for (char c : bytes) {
    auto index = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<std::uint8_t>(c));
    crc = static_cast<std::uint16_t>((crc << 8) ^ kCrc16Table[index]);
  }
  return crc;
}

std::string_view HashTag(std::string_view key) noexcept {
  std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  std::size_t close = key.find('}', open + 1);
  // "{}" and an unclosed '{' hash the whole key.
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::uint16_t KeySlot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(Crc16Xmodem(HashTag(key)) % kSlotCount);
}

std::string SlotTag(std::uint16_t slot) {
  // Built once, on first use: the numbers 0, 1, 2, ... cover every slot by
  // 109758 (test_cluster_slots checks each slot's tag); the bound only keeps
  // the loop finite.
  static const std::array<std::uint32_t, kSlotCount> kTags = [] {
    constexpr std::uint32_t kUnset = 0xffffffff;
    std::array<std::uint32_t, kSlotCount> tags;
    tags.fill(kUnset);
    std::size_t covered = 0;
    for (std::uint32_t n = 0; covered < kSlotCount && n < 10'000'000; ++n) {
      const std::string digits = std::to_string(n);
      std::uint32_t& tag = tags[Crc16Xmodem(digits) % kSlotCount];
      if (tag == kUnset) {
        tag = n;
        ++covered;
      }
    }
    return tags;
  }();
  return std::to_string(kTags[slot % kSlotCount]);
}

const ClusterNode* SlotMap::PrimaryFor(std::uint16_t slot) const noexcept {
  if (slot >= kSlotCount || owner_[slot] == kNoNode) return nullptr;
  return &primaries_[owner_[slot]];
}

std::size_t SlotMap::covered_slots() const noexcept {
  std::size_t covered = 0;
  for (std::uint16_t owner : owner_) covered += owner != kNoNode ? 1 : 0;
  return covered;
}

std::uint16_t SlotMap::IndexOf(const ClusterNode& node) {
  for (std::size_t i = 0; i < primaries_.size(); ++i) {
    if (primaries_[i] == node) return static_cast<std::uint16_t>(i);
  }
  primaries_.push_back(node);
  return static_cast<std::uint16_t>(primaries_.size() - 1);
}

void SlotMap::Assign(std::uint16_t slot, const ClusterNode& node) {
  if (slot < kSlotCount) owner_[slot] = IndexOf(node);
}

Status SlotMap::AssignRange(std::int64_t first, std::int64_t last, const ClusterNode& node) {
  if (first < 0 || last < first || last >= kSlotCount) {
    return Status::ProtocolError("slot range " + std::to_string(first) + "-" +
                                 std::to_string(last) + " is out of bounds");
  }
  if (node.port <= 0 || node.port > 65535) {
    return Status::ProtocolError("slot range " + std::to_string(first) + "-" +
                                 std::to_string(last) + " is served at port " +
                                 std::to_string(node.port) + ", which no server has");
  }
  std::uint16_t index = IndexOf(node);
  for (std::int64_t slot = first; slot <= last; ++slot) {
    // A slot two primaries claim: the map contradicts itself, and either may be wrong.
    if (owner_[slot] != kNoNode && owner_[slot] != index) {
      return Status::ProtocolError("slot " + std::to_string(slot) + " is claimed by two primaries");
    }
    owner_[slot] = index;
  }
  return Status::OK();
}

Status SlotMap::FromShards(RespValue reply, std::string_view asked_host, NodePort port_kind,
                           SlotMap* out) {
  if (!reply.IsAggregate()) return BadReply("SHARDS", "not an array");
  SlotMap map;
  for (RespValue shard : reply) {
    RespValue slots = shard, nodes = shard;
    if (!shard.FindField("slots", &slots) || !shard.FindField("nodes", &nodes)) {
      return BadReply("SHARDS", "a shard without slots or nodes");
    }
    if (slots.size() % 2 != 0) return BadReply("SHARDS", "an odd slot range list");
    if (slots.size() == 0) continue;
    ClusterNode primary;
    Status found = ShardPrimary(nodes, asked_host, port_kind, &primary);
    if (found.IsNotFound()) continue;  // no online primary: its slots stay unserved
    if (!found.ok()) return found;
    for (auto it = slots.begin(); it != slots.end(); ++it) {
      std::int64_t first = 0, last = 0;
      if (!AsNumber(*it, &first) || !AsNumber(*++it, &last)) {
        return BadReply("SHARDS", "a slot that is not a number");
      }
      if (Status s = map.AssignRange(first, last, primary); !s.ok()) return s;
    }
  }
  *out = std::move(map);
  return Status::OK();
}

Status SlotMap::FromSlots(RespValue reply, std::string_view asked_host, SlotMap* out) {
  if (!reply.IsAggregate()) return BadReply("SLOTS", "not an array");
  SlotMap map;
  for (RespValue range : reply) {
    std::int64_t first = 0, last = 0, port = 0;
    if (!range.IsAggregate() || range.size() < 3 || !AsNumber(range[0], &first) ||
        !AsNumber(range[1], &last)) {
      return BadReply("SLOTS", "a range without bounds and a primary");
    }
    RespValue node = range[2];
    if (!node.IsAggregate() || node.size() < 2 || !AsNumber(node[1], &port)) {
      return BadReply("SLOTS", "a primary without an address");
    }
    ClusterNode primary;
    primary.host = EndpointHost(node[0].text(), {}, asked_host);
    primary.port = static_cast<int>(std::clamp<std::int64_t>(port, -1, 65536));
    if (node.size() >= 3) primary.id = std::string(node[2].text());
    if (Status s = map.AssignRange(first, last, primary); !s.ok()) return s;
  }
  *out = std::move(map);
  return Status::OK();
}

bool SplitHostPort(std::string_view address, std::string* host, int* port) {
  std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::int64_t number = 0;
  if (!ParseDecimal(address.substr(colon + 1), &number) || number <= 0 || number > 65535) {
    return false;
  }
  *host = std::string(address.substr(0, colon));
  *port = static_cast<int>(number);
  return true;
}

std::optional<Redirect> ParseRedirect(std::string_view error, std::string_view asked_host) {
  Redirect redirect;
  if (error.starts_with("MOVED ")) {
    redirect.kind = Redirect::Kind::kMoved;
  } else if (error.starts_with("ASK ")) {
    redirect.kind = Redirect::Kind::kAsk;
  } else {
    return std::nullopt;
  }
  std::string_view rest = error.substr(error.find(' ') + 1);
  std::size_t space = rest.find(' ');
  std::int64_t slot = 0;
  if (space == std::string_view::npos || !ParseDecimal(rest.substr(0, space), &slot) || slot < 0 ||
      slot >= kSlotCount) {
    return std::nullopt;
  }
  redirect.slot = static_cast<std::uint16_t>(slot);
  if (!SplitHostPort(rest.substr(space + 1), &redirect.node.host, &redirect.node.port)) {
    return std::nullopt;
  }
  if (redirect.node.host.empty()) redirect.node.host = std::string(asked_host);
  return redirect;
}

ClusterErrorKind ClassifyClusterError(std::string_view error) noexcept {
  // The word alone too: a redirection without its arguments is malformed (a
  // protocol error where ParseRedirect refuses it), not a command's error.
  const std::string_view word = error.substr(0, error.find(' '));
  if (word == "MOVED") return ClusterErrorKind::kMoved;
  if (word == "ASK") return ClusterErrorKind::kAsk;
  if (error.starts_with("TRYAGAIN")) return ClusterErrorKind::kTryAgain;
  if (error.starts_with("CLUSTERDOWN")) return ClusterErrorKind::kClusterDown;
  return ClusterErrorKind::kNone;
}

}  // namespace cachet::redis
