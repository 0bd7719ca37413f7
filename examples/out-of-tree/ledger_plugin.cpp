// The consumer's network store plugin, "ledger": a store on cachet's network
// engine (cachet/net/batch_runner.h), built outside cachet's tree and checked
// by cachet-conformance against ledger_server.cpp. docs/plugins.md, "Writing a
// network store on the engine", walks through the same pieces.
//
// The ledger protocol: requests in order on one connection, one reply each.
//   get KEY\r\n                            value LEN\r\nBYTES\r\n | miss\r\n
//   set|add|replace KEY LEN\r\nBYTES\r\n   ok\r\n | not_stored\r\n
//   del KEY\r\n                            ok\r\n | miss\r\n
//   a request the server cannot read       error TEXT\r\n (then it hangs up)
// TTL and flags are not the server's: the core keeps them in the value.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachet/net/batch_runner.h"
#include "cachet/net/pool_config.h"
#include "cachet/net/server_pool.h"
#include "cachet/plugin.h"

namespace {

using cachet::Operation;
using cachet::OpKind;
using cachet::Status;
using cachet::StoreMode;

constexpr std::size_t kMaxKeySize = 250;
constexpr std::size_t kMaxValueSize = 16 << 20;
constexpr std::size_t kMaxReplyLine = 64;  // "value " and a length, with room to spare

// A key goes into the request line as it is: no space or control byte may cut the line.
Status CheckKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeySize) {
    return Status::InvalidArgument("ledger: a key is 1 to 250 bytes");
  }
  for (const unsigned char c : key) {
    if (c <= ' ' || c == 0x7f) {
      return Status::InvalidArgument("ledger: a key may not hold spaces or control bytes");
    }
  }
  return Status::OK();
}

// The request line's command for a write, or empty when the protocol has none.
std::string_view WriteCommand(StoreMode mode) {
  switch (mode) {
    case StoreMode::kSet:
      return "set";
    case StoreMode::kAdd:
      return "add";
    case StoreMode::kReplace:
      return "replace";
    default:
      return {};
  }
}

// One server's share of a batch: the requests of its operations, and the
// reader of their replies, fed by the engine from the connection.
class LedgerBatch final : public cachet::net::ServerBatch {
 public:
  // Starts a new batch; the operations and the request are those of the last Add()s.
  void Reset() {
    request_.clear();
    ops_.clear();
    answered_ = 0;
  }

  // Encodes `op`, or settles it at once when it cannot be sent: a bad key, a
  // value too large, an operation the protocol does not have.
  void Add(Operation& op) {
    if (Status s = CheckKey(op.key); !s.ok()) {
      op.status = std::move(s);
      return;
    }
    if (op.kind == OpKind::kGet) {
      Line("get", op.key);
    } else if (op.kind == OpKind::kRemove) {
      Line("del", op.key);
    } else if (op.kind == OpKind::kStore && !WriteCommand(op.mode).empty()) {
      if (op.item.value.size() > kMaxValueSize) {
        op.status = Status::TooLarge("ledger: values are at most 16 MiB");
        return;
      }
      request_ += WriteCommand(op.mode);
      request_ += ' ';
      request_ += op.key;
      request_ += ' ';
      request_ += std::to_string(op.item.value.size());
      request_ += "\r\n";
      request_ += op.item.value;
      request_ += "\r\n";
    } else {
      op.status = Status::Unsupported("ledger: the store has only get, set, add, replace and del");
      return;
    }
    ops_.push_back(&op);
  }

  bool empty() const noexcept { return ops_.empty(); }

  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }

  // Takes every whole reply at the front of `buffer`, each for the next operation.
  Status Consume(cachet::net::ReadBuffer& buffer) override {
    while (!done()) {
      const std::string_view input = buffer.data();
      const std::size_t end = input.find("\r\n");
      if (end == std::string_view::npos) {
        if (input.size() > kMaxReplyLine) return Unexpected(input.substr(0, kMaxReplyLine));
        return Status::OK();  // the line is still arriving
      }
      const std::string_view line = input.substr(0, end);
      Operation& op = *ops_[answered_];
      std::size_t used = end + 2;
      if (op.kind == OpKind::kGet && line.starts_with("value ")) {
        std::size_t size = 0;
        const std::string_view digits = line.substr(6);
        const auto [last, error] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
        if (error != std::errc() || last != digits.data() + digits.size() || size > kMaxValueSize) {
          return Unexpected(line);
        }
        if (input.size() < used + size + 2) return Status::OK();  // the value is still arriving
        if (input.substr(used + size, 2) != "\r\n") return Unexpected(line);
        op.result.value.assign(input.substr(used, size));  // keeps the caller's buffer
        op.result.flags = 0;
        op.result.cas = 0;
        op.status = Status::OK();
        used += size + 2;
      } else if (line == "ok" && op.kind != OpKind::kGet) {
        op.status = Status::OK();
      } else if (line == "miss" && op.kind != OpKind::kStore) {
        op.status = Status::NotFound();
      } else if (line == "not_stored" && op.kind == OpKind::kStore) {
        op.status = Status::NotStored();
      } else {
        return Unexpected(line);
      }
      buffer.Consume(used);
      ++answered_;
    }
    return Status::OK();
  }

  bool done() const noexcept override { return answered_ == ops_.size(); }

  // Operations the server never answered take the exchange's error: a dead
  // server is an error, never a miss.
  void Settle(const Status& transport) override {
    // Replies pair with requests by position: after any failure (a reply too
    // many, or one skipped before a timeout) any answer may be another key's.
    const std::size_t first = transport.ok() ? answered_ : 0;
    for (std::size_t i = first; i < ops_.size(); ++i) {
      ops_[i]->status = transport.ok() ? Status::ProtocolError("ledger: no reply") : transport;
    }
  }

 private:
  void Line(std::string_view command, std::string_view key) {
    request_ += command;
    request_ += ' ';
    request_ += key;
    request_ += "\r\n";
  }
  // A reply this reader did not ask for: the exchange ends and the engine
  // closes the connection, so what follows is never read as another answer.
  Status Unexpected(std::string_view line) const {
    return Status::ProtocolError("ledger: unexpected reply \"" + std::string(line) + "\"");
  }

  std::string request_;
  std::vector<Operation*> ops_;
  std::size_t answered_ = 0;
};

struct LedgerOptions {
  std::vector<cachet::net::ServerAddress> servers;
  cachet::net::DistributionKind distribution{};
  cachet::net::ServerPoolOptions pool;
};

class LedgerBackend final : public cachet::Backend {
 public:
  explicit LedgerBackend(LedgerOptions options)
      : owner_(cachet::net::BatchRunner::NewOwner()),
        pool_(options.servers,
              cachet::net::Distribution::Create(options.distribution, options.servers),
              std::move(options.pool)) {}

  std::string_view name() const noexcept override { return "ledger"; }
  cachet::Capabilities capabilities() const noexcept override { return {}; }

  // A single operation is a batch of one.
  Status Get(std::string_view key, cachet::Item* out) override {
    Operation op;
    op.kind = OpKind::kGet;
    op.key = key;
    op.result.value.swap(out->value);  // the reply is read into the caller's buffer
    Execute(std::span(&op, 1));
    out->value.swap(op.result.value);
    out->flags = op.result.flags;
    out->cas = op.result.cas;
    return op.status;
  }

  Status Store(StoreMode mode, std::string_view key, cachet::ItemView item,
               const cachet::WriteOptions&) override {
    Operation op;
    op.kind = OpKind::kStore;
    op.mode = mode;
    op.key = key;
    op.item = item;
    Execute(std::span(&op, 1));
    return op.status;
  }

  Status Remove(std::string_view key) override {
    Operation op;
    op.kind = OpKind::kRemove;
    op.key = key;
    Execute(std::span(&op, 1));
    return op.status;
  }

  // Routes each operation to its server; the engine runs every server's batch at once.
  void Execute(std::span<Operation> batch) override {
    thread_local cachet::net::BatchRunner runner;  // one per thread, in the plugin
    runner.Claim(owner_, pool_.size());
    for (Operation& op : batch) runner.AddRouted(pool_, op);
    runner.EnlistGroups(pool_, [](std::size_t, std::span<Operation* const> group,
                                  std::unique_ptr<cachet::net::ServerBatch>& slot) {
      if (!slot) slot = std::make_unique<LedgerBatch>();
      auto& ledger = static_cast<LedgerBatch&>(*slot);
      ledger.Reset();
      for (Operation* op : group) ledger.Add(*op);
      return ledger.empty() ? nullptr : &ledger;
    });
    runner.Run(pool_.CallDeadline());
  }

  // The pool's counts per server: Cache::Health() and the metrics report them.
  Status Health(std::vector<cachet::ServerHealth>* out) const override {
    pool_.AppendHealth(out);
    return Status::OK();
  }

 private:
  const std::uint64_t owner_;
  cachet::net::ServerPool pool_;
};

// `servers`, `distribution` and the options every network store shares
// (timeouts, pool size, TLS).
constexpr cachet::OptionSpec kOwnOptions[] = {
    {"servers", cachet::OptionType::kList, "127.0.0.1:7070",
     "ledger servers as host:port[:weight], comma-separated; the port defaults to 7070"},
    {"distribution", cachet::OptionType::kString, "ketama", "key placement over several servers",
     false, false, "ketama|modula|cache-memcached|cmf-ketama"},
};
constexpr auto kOptions =
    cachet::net::JoinOptionSpecs(kOwnOptions, cachet::net::kServerPoolOptionSpecs);

Status ReadOptions(const cachet::ConfigSection& section, LedgerOptions* out) {
  if (Status s = cachet::net::ReadServers(section, 7070, &out->servers, &out->distribution);
      !s.ok()) {
    return s;
  }
  return cachet::net::ReadServerPoolOptions(section, &out->pool);
}

Status ValidateLedger(const cachet::ConfigSection& section) noexcept {
  return cachet::GuardedCreate("ledger", [&] {
    LedgerOptions options;
    return ReadOptions(section, &options);
  });
}

Status CreateLedger(const cachet::PluginContext& context,
                    std::unique_ptr<cachet::Backend>* out) noexcept {
  return cachet::GuardedCreate("ledger", [&] {
    LedgerOptions options;
    if (Status s = ReadOptions(context.options, &options); !s.ok()) return s;
    *out = std::make_unique<LedgerBackend>(std::move(options));
    return Status::OK();
  });
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "ledger",
    "1.0",
    "ledger servers over a line protocol, on cachet's network engine; built out of tree",
    kOptions.data(),
    kOptions.size(),
    0,
    &CreateLedger,
    &ValidateLedger,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
