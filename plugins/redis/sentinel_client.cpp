// Asking the sentinels, in order, for a master's address and its replicas.
#include "sentinel_client.h"

#include <charconv>
#include <utility>

#include "resp_encoder.h"

namespace cachet::redis {

namespace {

// "ip" as a ServerAddress host: an IPv6 literal gets the brackets a configured
// one would have.
Result<net::ServerAddress> AddressOf(std::string_view ip, std::string_view port_text,
                                     std::string_view where) {
  unsigned port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ip.empty() || error != std::errc() || end != port_text.data() + port_text.size() ||
      port == 0 || port > 65535) {
    return Status::ProtocolError("redis sentinel " + std::string(where) + ": bad address \"" +
                                 std::string(ip) + ":" + std::string(port_text) + "\"");
  }
  std::string host = ip.find(':') != std::string_view::npos && ip.front() != '['
                         ? "[" + std::string(ip) + "]"
                         : std::string(ip);
  return net::ServerAddress{std::move(host), static_cast<std::uint16_t>(port), 1};
}

bool HasFlag(std::string_view flags, std::string_view flag) {
  while (!flags.empty()) {
    const std::size_t comma = flags.find(',');
    if (flags.substr(0, comma) == flag) return true;
    flags = comma == std::string_view::npos ? std::string_view() : flags.substr(comma + 1);
  }
  return false;
}

// The text of field `name` of a replica's description; empty when absent.
std::string_view FieldText(RespValue replica, std::string_view name) {
  RespValue value(nullptr, 0);
  return replica.FindField(name, &value) && value.IsString() ? value.text() : std::string_view();
}

}  // namespace

Result<net::ServerAddress> ReadMasterAddress(RespValue reply, std::string_view where) {
  if (reply.IsNull()) return Status::NotFound();
  if (reply.type() != RespType::kArray || reply.size() != 2 || !reply[0].IsString() ||
      !reply[1].IsString()) {
    return Status::ProtocolError("redis sentinel " + std::string(where) +
                                 ": GET-MASTER-ADDR-BY-NAME answered " +
                                 std::string(RespTypeName(reply.type())) + ", not [ip, port]");
  }
  return AddressOf(reply[0].text(), reply[1].text(), where);
}

Result<std::vector<net::ServerAddress>> ReadUsableReplicas(RespValue reply,
                                                           std::string_view where) {
  if (reply.type() != RespType::kArray) {
    return Status::ProtocolError("redis sentinel " + std::string(where) +
                                 ": SENTINEL REPLICAS answered " +
                                 std::string(RespTypeName(reply.type())) + ", not a list");
  }
  std::vector<net::ServerAddress> usable;
  for (const RespValue replica : reply) {
    if (!replica.IsAggregate()) {
      return Status::ProtocolError("redis sentinel " + std::string(where) +
                                   ": SENTINEL REPLICAS lists something other than fields");
    }
    const std::string_view flags = FieldText(replica, "flags");
    if (HasFlag(flags, "s_down") || HasFlag(flags, "o_down") || HasFlag(flags, "disconnected") ||
        FieldText(replica, "master-link-status") != "ok") {
      continue;
    }
    Result<net::ServerAddress> address =
        AddressOf(FieldText(replica, "ip"), FieldText(replica, "port"), where);
    if (!address.ok()) return address.status();
    usable.push_back(std::move(address).value());
  }
  return usable;
}

bool RoleIsMaster(RespValue reply) {
  return reply.IsAggregate() && reply.size() > 0 && reply[0].IsString() &&
         reply[0].text() == "master";
}

bool RoleIsConnectedReplica(RespValue reply) {
  return reply.IsAggregate() && reply.size() >= 4 && reply[0].IsString() &&
         reply[0].text() == "slave" && reply[3].IsString() && reply[3].text() == "connected";
}

Result<net::ServerAddress> ReadSwitchMaster(std::string_view message, std::string_view master) {
  std::vector<std::string_view> words;
  while (!message.empty() && words.size() < 6) {
    const std::size_t space = message.find(' ');
    if (space != 0) words.push_back(message.substr(0, space));
    message = space == std::string_view::npos ? std::string_view() : message.substr(space + 1);
  }
  if (words.size() != 5) {
    return Status::ProtocolError("redis sentinel: +switch-master message of " +
                                 std::to_string(words.size()) + " words, not 5");
  }
  if (words[0] != master) return Status::NotFound();
  return AddressOf(words[3], words[4], "+switch-master");
}

SentinelClient::SentinelClient(std::vector<net::ServerAddress> sentinels, std::string master,
                               net::ServerPoolOptions pool, SessionSettings session)
    : sentinels_(std::move(sentinels)),
      master_(std::move(master)),
      session_(std::move(session)),
      pool_(sentinels_, net::Distribution::Create(net::DistributionKind::kModula, sentinels_),
            pool) {}

Status SentinelClient::AskInOrder(std::string_view request, net::Deadline deadline,
                                  const ReadFn& read, std::size_t first, std::size_t* answered) {
  // Inside a push hook no sentinel is asked: a refusal, not "none answered".
  if (RedisSession::InPushHook()) [[unlikely]]
    return RedisSession::PushHookRefusal("sentinel");
  std::string reasons;  // "host:port: why; ..." for the error when none answers
  std::size_t not_monitoring = 0;
  for (std::size_t n = 0; n < pool_.size(); ++n) {
    const std::size_t i = (first + n) % pool_.size();
    const std::string where = pool_.address(i).HostPort();
    if (net::Clock::now() >= deadline) {
      return Status::Timeout(
          "redis sentinel: the request timeout ran out before a sentinel "
          "answered about master '" +
          master_ + "'" + (reasons.empty() ? "" : "; " + reasons));
    }
    Status answer;
    if (!pool_.Available(i)) {
      answer = pool_.DeadServerError(i);
    } else {
      answer = session_
                   .Call(pool_, i, request, 1, net::Clock::now(), deadline,
                         [&](std::size_t, RespValue reply) {
                           return reply.IsError() ? StatusFromError(reply.text(), where)
                                                  : read(reply, where);
                         })
                   .status();
    }
    if (answer.ok()) {
      if (answered != nullptr) *answered = i;
      return answer;
    }
    if (answer.IsAuthFailed()) {
      // The data nodes' credentials are not the sentinels': say which to check.
      return Status::AuthFailed("redis sentinel " + where +
                                ": authentication failed (check [redis] sentinel_username and "
                                "sentinel_password)");
    }
    if (answer.IsNotFound()) {
      ++not_monitoring;
      answer = Status::NotFound("monitors no master named '" + master_ + "'");
    }
    if (!reasons.empty()) reasons += "; ";
    // Transport errors name the server already.
    if (answer.message().find(where) == std::string_view::npos) reasons += where + ": ";
    reasons += answer.message();
  }
  // The last sentinel's call may have used the time up (waiting for a connection).
  if (net::Clock::now() >= deadline) {
    return Status::Timeout(
        "redis sentinel: the request timeout ran out before a sentinel "
        "answered about master '" +
        master_ + "'; " + reasons);
  }
  if (not_monitoring == pool_.size()) {
    return Status::ConfigError("redis sentinel: no sentinel monitors a master named '" + master_ +
                               "' (check [redis] sentinel_master); " + reasons);
  }
  return Status::Unavailable("redis sentinel: no sentinel answered about master '" + master_ +
                             "': " + reasons);
}

Result<net::ServerAddress> SentinelClient::MasterAddress(net::Deadline deadline, std::size_t first,
                                                         std::size_t* answered) {
  std::string request;
  AppendCommand(&request, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_});
  net::ServerAddress found;
  Status s = AskInOrder(
      request, deadline,
      [&](RespValue reply, std::string_view where) {
        Result<net::ServerAddress> address = ReadMasterAddress(reply, where);
        if (!address.ok()) return address.status();
        found = std::move(address).value();
        return Status::OK();
      },
      first, answered);
  if (!s.ok()) return s;
  return found;
}

Result<std::vector<net::ServerAddress>> SentinelClient::UsableReplicas(net::Deadline deadline) {
  std::string request;
  AppendCommand(&request, {"SENTINEL", "REPLICAS", master_});
  std::vector<net::ServerAddress> found;
  Status s = AskInOrder(request, deadline, [&](RespValue reply, std::string_view where) {
    Result<std::vector<net::ServerAddress>> replicas = ReadUsableReplicas(reply, where);
    if (!replicas.ok()) return replicas.status();
    found = std::move(replicas).value();
    return Status::OK();
  });
  if (!s.ok()) return s;
  return found;
}

}  // namespace cachet::redis
