// TokyoTyrantBackend::Extension: the Tokyo Tyrant-only commands, reachable by
// applications without widening the generic API. Each command, its arguments and
// its reply lines are listed in docs/tokyotyrant.md and in kCommands below.
#include <charconv>
#include <cstdio>
#include <deque>
#include <limits>

#include "tt_backend.h"
#include "tt_request.h"

namespace cachet::tokyotyrant {

using Args = std::span<const std::string>;
using Lines = std::vector<std::string>;

// Runs one extension command against the backend's servers.
class ExtensionRunner {
 public:
  ExtensionRunner(TokyoTyrantBackend& backend, Lines* reply) : b_(backend), reply_(reply) {}

  Status Run(std::string_view command, Args args);

 private:
  Status Dispatch(std::string_view command, Args args);
  Status FwmKeys(Args args);
  Status Vsiz(Args args);
  Status AddInt(Args args);
  Status AddDouble(Args args);
  Status PutCat(Args args);
  Status PutShl(Args args);
  Status Count(Command command);
  Status Keys(Args args);
  Status OnEveryServer(Command command);
  Status Optimize(Args args);
  Status Misc(Args args);

  // The server for a command about `key` that does what `kind` does (kGet:
  // reads; kIncr, kStore, kRemove: changes the value), under failover's rule,
  // or why there is none. A command sent around the key's own server is noted
  // again once it is over (Run).
  Result<std::size_t> Route(std::string_view key, OpKind kind);
  // Route() for each of `keys`, which must all live on one server.
  Result<std::size_t> RouteAll(std::string_view command, std::span<const std::string_view> keys,
                               OpKind kind);
  // Misc()'s route: by what its function does with which of its arguments.
  Result<std::size_t> RouteMisc(Args args);
  Status StatusReply(std::size_t server, const std::string& request);
  // "tokyotyrant host:port: ", the start of an error `server` answered.
  std::string Where(std::size_t server) const;
  static Status ParseInt(std::string_view text, std::int64_t low, std::int64_t high,
                         std::int64_t* out);
  static Status Arity(std::string_view command, Args args, std::size_t low, std::size_t high);

  TokyoTyrantBackend& b_;
  Lines* reply_;
  std::string request_;
  // With failover, the keys the command sent around their own server.
  std::deque<Operation> routed_;  // stable: around_ points into it
  std::vector<net::Failover::Around> around_;
};

Status TokyoTyrantBackend::Extension(std::string_view command, std::span<const std::string> args,
                                     std::vector<std::string>* reply) {
  reply->clear();
  return ExtensionRunner(*this, reply).Run(command, args);
}

Status ExtensionRunner::Run(std::string_view command, Args args) {
  Status s = Dispatch(command, args);
  for (const net::Failover::Around& a : around_) b_.NoteWriteAround(*a.op, a.home, a.server);
  return s;
}

Status ExtensionRunner::Dispatch(std::string_view command, Args args) {
  if (command == "fwmkeys") return FwmKeys(args);
  if (command == "vsiz") return Vsiz(args);
  if (command == "addint") return AddInt(args);
  if (command == "adddouble") return AddDouble(args);
  if (command == "putcat") return PutCat(args);
  if (command == "putshl") return PutShl(args);
  if (command == "rnum" || command == "size") {
    if (Status s = Arity(command, args, 0, 0); !s.ok()) return s;
    return Count(command == "rnum" ? Command::kRnum : Command::kSize);
  }
  if (command == "keys") return Keys(args);
  if (command == "sync") {
    if (Status s = Arity(command, args, 0, 0); !s.ok()) return s;
    return OnEveryServer(Command::kSync);
  }
  if (command == "optimize") return Optimize(args);
  if (command == "misc") return Misc(args);
  return Status::Unsupported("tokyotyrant: unknown extension command '" + std::string(command) +
                             "' (fwmkeys, vsiz, addint, adddouble, putcat, putshl, rnum, size, "
                             "keys, sync, optimize, misc)");
}

Status ExtensionRunner::Arity(std::string_view command, Args args, std::size_t low,
                              std::size_t high) {
  if (args.size() >= low && args.size() <= high) return Status::OK();
  return Status::InvalidArgument("tokyotyrant: " + std::string(command) + " takes " +
                                 std::to_string(low) + ".." + std::to_string(high) +
                                 " arguments, not " + std::to_string(args.size()));
}

Status ExtensionRunner::ParseInt(std::string_view text, std::int64_t low, std::int64_t high,
                                 std::int64_t* out) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < low || v > high) {
    return Status::InvalidArgument("tokyotyrant: '" + std::string(text) +
                                   "' is not an integer in [" + std::to_string(low) + ", " +
                                   std::to_string(high) + "]");
  }
  *out = v;
  return Status::OK();
}

Result<std::size_t> ExtensionRunner::Route(std::string_view key, OpKind kind) {
  if (key.empty()) return Status::InvalidArgument("tokyotyrant: empty key");
  Operation& op = routed_.emplace_back();
  op.kind = kind;
  op.mode = StoreMode::kAppend;  // a store that keeps what it does not name
  op.key = key;
  std::size_t server = 0;
  std::size_t home = 0;
  if (!b_.Route(op, &server, &home)) return std::move(op.status);
  if (server != home) [[unlikely]]
    around_.push_back({&op, home, server});
  return server;
}

Result<std::size_t> ExtensionRunner::RouteAll(std::string_view command,
                                              std::span<const std::string_view> keys,
                                              OpKind kind) {
  const Status spread = Status::InvalidArgument(
      "tokyotyrant: misc " + std::string(command) +
      ": its keys live on different servers; split the list by server (nothing was sent)");
  // Their own servers first, so a list refused for that routes (and notes) nothing.
  std::size_t first_home = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::size_t home = 0;
    static_cast<void>(b_.pool_.Route(keys[i], &home));
    if (i == 0) first_home = home;
    if (home != first_home) return spread;
  }
  std::size_t first = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Result<std::size_t> server = Route(keys[i], kind);
    if (!server.ok()) return server;
    if (i == 0) first = *server;
    if (*server != first) return spread;  // stand-ins for one server may differ per key
  }
  return first;
}

Result<std::size_t> ExtensionRunner::RouteMisc(Args args) {
  const std::string& function = args[0];
  const Args rest = args.subspan(1);
  // Views into `args`, which outlives the command (Run notes them after it).
  std::vector<std::string_view> keys;
  if (function == "getlist" || function == "outlist") {
    keys.assign(rest.begin(), rest.end());
    return RouteAll(function, keys, function == "getlist" ? OpKind::kGet : OpKind::kRemove);
  }
  if (function == "putlist") {
    if (rest.size() % 2 != 0) {
      return Status::InvalidArgument("tokyotyrant: misc putlist takes keys and values in pairs");
    }
    for (std::size_t i = 0; i < rest.size(); i += 2) keys.push_back(rest[i]);
    return RouteAll(function, keys, OpKind::kStore);
  }
  if (function == "get" || function == "getpart") return Route(rest[0], OpKind::kGet);
  if (function == "out") return Route(rest[0], OpKind::kRemove);
  // put, putkeep, putcat, putdup, ... and functions cachet does not know: the
  // first argument picks the server, and the command counts as a write to it.
  return Route(rest[0], OpKind::kStore);
}

Status ExtensionRunner::StatusReply(std::size_t server, const std::string& request) {
  return b_.RoundTrip(server, request, ReplyShape::kStatus, [](const Reply& r, std::string_view) {
    return r.ok ? Status::OK() : Status::NotStored();
  });
}

Status ExtensionRunner::FwmKeys(Args args) {
  if (Status s = Arity("fwmkeys", args, 1, 2); !s.ok()) return s;
  std::int64_t max = -1;
  if (args.size() == 2) {
    if (Status s = ParseInt(args[1], -1, std::numeric_limits<std::int32_t>::max(), &max); !s.ok())
      return s;
  }
  if (Status s = EncodeFwmKeys(args[0], static_cast<std::int32_t>(max), &request_); !s.ok()) {
    return s;
  }
  // Keys with one prefix live on every server of the ring: ask them all.
  for (std::size_t server = 0; server < b_.pool_.size(); ++server) {
    Status s = b_.RoundTrip(server, request_, ReplyShape::kKeyList,
                            [&](const Reply& r, std::string_view buffer) {
                              for (std::size_t i = 0; i < r.fields.size(); ++i) {
                                reply_->emplace_back(r.Field(buffer, i));
                              }
                              return Status::OK();
                            });
    if (!s.ok()) return s;
  }
  if (max >= 0 && reply_->size() > static_cast<std::size_t>(max)) {
    reply_->resize(static_cast<std::size_t>(max));
  }
  return Status::OK();
}

Status ExtensionRunner::Vsiz(Args args) {
  if (Status s = Arity("vsiz", args, 1, 1); !s.ok()) return s;
  Result<std::size_t> server = Route(args[0], OpKind::kGet);
  if (!server.ok()) return server.status();
  if (Status s = EncodeKeyCommand(Command::kVsiz, args[0], &request_); !s.ok()) return s;
  return b_.RoundTrip(*server, request_, ReplyShape::kInt32, [&](const Reply& r, std::string_view) {
    if (!r.ok) return Status::NotFound();
    reply_->push_back(std::to_string(r.int32));
    return Status::OK();
  });
}

Status ExtensionRunner::AddInt(Args args) {
  if (Status s = Arity("addint", args, 2, 2); !s.ok()) return s;
  std::int64_t num = 0;
  constexpr std::int64_t kLow = std::numeric_limits<std::int32_t>::min();
  constexpr std::int64_t kHigh = std::numeric_limits<std::int32_t>::max();
  if (Status s = ParseInt(args[1], kLow, kHigh, &num); !s.ok()) return s;
  Result<std::size_t> server = Route(args[0], OpKind::kIncr);
  if (!server.ok()) return server.status();
  if (Status s = EncodeAddInt(args[0], static_cast<std::int32_t>(num), &request_); !s.ok()) {
    return s;
  }
  return b_.RoundTrip(*server, request_, ReplyShape::kInt32, [&](const Reply& r, std::string_view) {
    if (!r.ok) return Status::InvalidArgument("tokyotyrant: not a 4-byte binary counter");
    reply_->push_back(std::to_string(r.int32));
    return Status::OK();
  });
}

Status ExtensionRunner::AddDouble(Args args) {
  if (Status s = Arity("adddouble", args, 2, 2); !s.ok()) return s;
  double num = 0;
  const std::string& text = args[1];
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), num);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument("tokyotyrant: '" + text + "' is not a number");
  }
  Result<std::size_t> server = Route(args[0], OpKind::kIncr);
  if (!server.ok()) return server.status();
  if (Status s = EncodeAddDouble(args[0], num, &request_); !s.ok()) return s;
  return b_.RoundTrip(
      *server, request_, ReplyShape::kDouble, [&](const Reply& r, std::string_view) {
        if (!r.ok) return Status::InvalidArgument("tokyotyrant: not an 8-byte double record");
        char text_sum[64];
        std::snprintf(text_sum, sizeof text_sum, "%.12g", JoinDouble(r.integer, r.fraction));
        reply_->push_back(text_sum);
        return Status::OK();
      });
}

Status ExtensionRunner::PutCat(Args args) {
  if (Status s = Arity("putcat", args, 2, 2); !s.ok()) return s;
  Result<std::size_t> server = Route(args[0], OpKind::kStore);
  if (!server.ok()) return server.status();
  if (Status s = EncodeStore(Command::kPutCat, args[0], args[1], &request_); !s.ok()) return s;
  return StatusReply(*server, request_);
}

Status ExtensionRunner::PutShl(Args args) {
  if (Status s = Arity("putshl", args, 3, 3); !s.ok()) return s;
  std::int64_t width = 0;
  if (Status s = ParseInt(args[2], 0, std::numeric_limits<std::int32_t>::max(), &width); !s.ok()) {
    return s;
  }
  Result<std::size_t> server = Route(args[0], OpKind::kStore);
  if (!server.ok()) return server.status();
  Status s = EncodePutShl(args[0], args[1], static_cast<std::int32_t>(width), &request_);
  if (!s.ok()) return s;
  return StatusReply(*server, request_);
}

std::string ExtensionRunner::Where(std::size_t server) const {
  return "tokyotyrant " + b_.pool_.address(server).HostPort() + ": ";
}

Status ExtensionRunner::Count(Command command) {
  if (Status s = EncodeBare(command, &request_); !s.ok()) return s;
  std::uint64_t total = 0;
  for (std::size_t server = 0; server < b_.pool_.size(); ++server) {
    Status s =
        b_.RoundTrip(server, request_, ReplyShape::kUint64, [&](const Reply& r, std::string_view) {
          if (!r.ok) return Status::IoError(Where(server) + "count failed (status 01)");
          total += r.uint64;
          return Status::OK();
        });
    if (!s.ok()) return s;
  }
  reply_->push_back(std::to_string(total));
  return Status::OK();
}

Status ExtensionRunner::Keys(Args args) {
  if (Status s = Arity("keys", args, 0, 1); !s.ok()) return s;
  std::int64_t max = kMaxItems;
  if (args.size() == 1) {
    if (Status s = ParseInt(args[0], 0, kMaxItems, &max); !s.ok()) return s;
  }
  std::string next;
  if (Status s = EncodeBare(Command::kIterNext, &next); !s.ok()) return s;
  // The iterator is shared by every connection to a server: iteration while
  // others write may skip or repeat keys, as with any Tokyo Tyrant client.
  for (std::size_t server = 0; server < b_.pool_.size(); ++server) {
    request_.clear();
    if (Status s = EncodeBare(Command::kIterInit, &request_); !s.ok()) return s;
    if (Status s = StatusReply(server, request_); !s.ok()) return s;
    bool more = true;
    while (more && reply_->size() < static_cast<std::size_t>(max)) {
      Status s = b_.RoundTrip(server, next, ReplyShape::kBytes,
                              [&](const Reply& r, std::string_view buffer) {
                                more = r.ok;
                                if (r.ok) reply_->emplace_back(r.Field(buffer, 0));
                                return Status::OK();
                              });
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

Status ExtensionRunner::OnEveryServer(Command command) {
  if (Status s = EncodeBare(command, &request_); !s.ok()) return s;
  for (std::size_t server = 0; server < b_.pool_.size(); ++server) {
    Status s = StatusReply(server, request_);
    if (s.IsNotStored()) return Status::IoError(Where(server) + "the server refused the command");
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ExtensionRunner::Optimize(Args args) {
  if (Status s = Arity("optimize", args, 0, 1); !s.ok()) return s;
  if (Status s = EncodeOptimize(args.empty() ? "" : args[0], &request_); !s.ok()) return s;
  for (std::size_t server = 0; server < b_.pool_.size(); ++server) {
    Status s = StatusReply(server, request_);
    if (s.IsNotStored()) return Status::IoError(Where(server) + "optimize failed (status 01)");
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ExtensionRunner::Misc(Args args) {
  if (args.size() < 2) {
    return Status::InvalidArgument("tokyotyrant: misc takes a function name and arguments");
  }
  // The keys pick the server (every key of putlist, outlist and getlist must
  // live on it; other functions go by their first argument).
  Result<std::size_t> server = RouteMisc(args);
  if (!server.ok()) return server.status();
  std::vector<std::string_view> misc_args(args.begin() + 1, args.end());
  if (Status s = EncodeMisc(args[0], 0, misc_args, &request_); !s.ok()) return s;
  return b_.RoundTrip(*server, request_, ReplyShape::kMiscList,
                      [&](const Reply& r, std::string_view buffer) {
                        if (!r.ok) {
                          return Status::InvalidArgument(Where(*server) + "misc " +
                                                         std::string(args[0]) + " failed");
                        }
                        for (std::size_t i = 0; i < r.fields.size(); ++i) {
                          reply_->emplace_back(r.Field(buffer, i));
                        }
                        return Status::OK();
                      });
}

}  // namespace cachet::tokyotyrant
