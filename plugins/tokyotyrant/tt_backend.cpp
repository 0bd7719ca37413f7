// TokyoTyrantBackend: checks, routing, per-server batches and fan-out.
#include "tt_backend.h"

#include <sys/uio.h>

#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "cachet/net/lone_call.h"
#include "tt_request.h"

namespace cachet::tokyotyrant {
namespace {

// Sends one request (borrowed) and reads exactly one reply of a known shape,
// which it hands to a callback. The caller reads the exchange's status from the
// runner and the callback's from TakeResult().
class OneReplyReader final : public net::ServerBatch {
 public:
  using Handler = std::function<Status(const Reply&, std::string_view)>;
  OneReplyReader(const std::string& request, ReplyShape shape, Handler handler)
      : request_(request), handler_(std::move(handler)) {
    parser_.Start(shape);
  }

  void Request(std::vector<iovec>* out) const override {
    out->assign(1, iovec{const_cast<char*>(request_.data()), request_.size()});
  }
  void Settle(const Status&) override {}

  Status Consume(net::ReadBuffer& buffer) override {
    if (done_) return Status::OK();
    const ParseState state = parser_.Parse(buffer.data());
    if (state == ParseState::kNeedMore) return Status::OK();
    if (state == ParseState::kError) return parser_.error();
    done_ = true;
    result_ = handler_(parser_.reply(), buffer.data());
    buffer.Consume(parser_.consumed());
    return Status::OK();
  }
  bool done() const noexcept override { return done_; }
  Status TakeResult() { return std::move(result_); }

 private:
  const std::string& request_;
  Handler handler_;
  ReplyParser parser_;
  bool done_ = false;
  Status result_;
};

}  // namespace

TokyoTyrantBackend::TokyoTyrantBackend(TokyoTyrantOptions options)
    : id_(net::BatchRunner::NewOwner()),
      options_(std::move(options)),
      pool_(options_.servers,
            net::Distribution::Create(options_.distribution, options_.servers,
                                      options_.ketama_points),
            options_.pool) {
  failover_ = net::Failover::IfEnabled(
      pool_,
      [this](std::size_t server, std::span<Operation* const> ops,
             std::unique_ptr<net::ServerBatch>& slot) -> net::ServerBatch* {
        TtServerBatch& batch = Fill(server, slot, ops);
        return batch.request().empty() ? nullptr : &batch;
      },
      [this](std::span<const std::size_t> servers, std::vector<bool>* cleaned) {
        std::string request;
        if (!EncodeBare(Command::kVanish, &request).ok()) return;
        // Each server's outcome is in `cleaned`; the first error says nothing more.
        static_cast<void>(RoundTripOn(servers, request, ReplyShape::kStatus,
                                      [&](std::size_t server, const Reply& r, std::string_view) {
                                        (*cleaned)[server] = r.ok;
                                        return Status::OK();
                                      }));
      });
}

TokyoTyrantBackend::~TokyoTyrantBackend() = default;

bool TokyoTyrantBackend::Route(Operation& op, std::size_t* server, std::size_t* home) {
  return net::RouteOperation(pool_, failover_.get(), op, server, home);
}

Capabilities TokyoTyrantBackend::capabilities() const noexcept {
  return options_.addint_counters ? kCapabilities.with(Capability::kCounters) : kCapabilities;
}

namespace {

std::string_view OpName(const Operation& op) {
  switch (op.kind) {
    case OpKind::kGet: return "get";
    case OpKind::kStore: return StoreModeName(op.mode);
    case OpKind::kRemove: return "remove";
    case OpKind::kIncr: return "incr";
    case OpKind::kDecr: return "decr";
    case OpKind::kTouch: return "touch";
  }
  return "an unknown operation";
}

}  // namespace

Status TokyoTyrantBackend::Check(const Operation& op) const {
  if (op.key.empty()) return Status::InvalidArgument("tokyotyrant: empty key");
  if (op.key.size() > static_cast<std::size_t>(kMaxFieldSize)) {
    return Status::TooLarge("tokyotyrant: key over the 256 MiB limit");
  }
  // putnr is the protocol's one command without a reply: any other write asked
  // to go noreply is refused rather than sent and silently waited for.
  if (op.noreply && !(op.kind == OpKind::kStore && op.mode == StoreMode::kSet)) {
    return Status::Unsupported("tokyotyrant has no noreply for " + std::string(OpName(op)) +
                               " (only set, as putnr): not sent");
  }
  switch (op.kind) {
    case OpKind::kGet:
    case OpKind::kRemove:
      return Status::OK();
    case OpKind::kIncr:
    case OpKind::kDecr:
      return options_.addint_counters
                 ? Status::OK()
                 : UnsupportedOperation(op.kind == OpKind::kIncr ? "incr (set addint_counters)"
                                                                 : "decr (set addint_counters)");
    case OpKind::kTouch:
      return UnsupportedOperation("touch");
    case OpKind::kStore:
      break;
  }
  if (op.ttl.count() < 0) return NegativeTtlError("tokyotyrant");
  if (op.item.value.size() > options_.max_item_size) {
    return Status::TooLarge("tokyotyrant: a value of " + std::to_string(op.item.value.size()) +
                            " bytes is over max_item_size (" +
                            std::to_string(options_.max_item_size) + ")");
  }
  switch (op.mode) {
    case StoreMode::kSet:
    case StoreMode::kAdd:
      return Status::OK();
    case StoreMode::kAppend:
      return options_.putcat_append ? Status::OK() : UnsupportedOperation("append");
    case StoreMode::kReplace:
      return UnsupportedOperation("replace");
    case StoreMode::kPrepend:
      return UnsupportedOperation("prepend");
    case StoreMode::kCas:
      return UnsupportedOperation("cas");
  }
  return Status::InvalidArgument("tokyotyrant: unknown store mode");
}

net::BatchRunner& TokyoTyrantBackend::Runner() const {
  // In the plugin, so that the plugin's code outlives the batches it holds.
  thread_local net::BatchRunner runner;
  runner.Claim(id_, pool_.size());
  return runner;
}

TtServerBatch& TokyoTyrantBackend::Fill(std::size_t server,
                                        std::unique_ptr<net::ServerBatch>& slot,
                                        std::span<Operation* const> ops) const {
  // A runner's slot serves one server of this store for as long as it lives.
  if (!slot) slot = std::make_unique<TtServerBatch>(options_, pool_.address(server).HostPort());
  auto& batch = static_cast<TtServerBatch&>(*slot);
  batch.Reset();
  for (Operation* op : ops) batch.Add(*op);
  batch.Finish();
  return batch;
}

void TokyoTyrantBackend::Run(std::span<Operation> ops) {
  net::BatchRunner& runner = Runner();
  const net::BatchRunner::Filling filling(runner);
  // With failover: operations that went around their home server, noted after.
  std::vector<net::Failover::Around> around;
  net::AddRoutedOperations(runner, pool_, failover_.get(), ops,
                           [this](const Operation& op) { return Check(op); }, &around);
  runner.EnlistGroups(pool_, [&](std::size_t server, std::span<Operation* const> group,
                                 std::unique_ptr<net::ServerBatch>& slot) -> net::ServerBatch* {
    TtServerBatch& batch = Fill(server, slot, group);
    return batch.request().empty() ? nullptr : &batch;  // nothing encodable
  });
  runner.Run(pool_.CallDeadline());
  if (!around.empty()) [[unlikely]]
    failover_->NoteWritesAround(around);
}

// Flattened: the whole call, engine steps and reply reading included, compiles as one function.
[[gnu::flatten]] Status TokyoTyrantBackend::RunOne(Operation& op) {
  op.status = Check(op);
  if (!op.status.ok()) return op.status;
  std::size_t server = 0;
  std::size_t home = 0;
  if (!Route(op, &server, &home)) return op.status;
  // The thread's batch kept for that server, refilled with this one operation.
  Operation* const one[] = {&op};
  TtServerBatch& batch = Fill(server, Runner().slot(server), one);
  if (batch.request().empty()) return op.status;  // settled at Add(): nothing to send
  thread_local std::vector<iovec> request;
  batch.Request(&request);
  const net::Clock::time_point start = net::Clock::now();
  net::RunAlone(pool_, server, request.data(), static_cast<int>(request.size()), batch, start,
                start + options_.pool.connection.CallTimeout());
  // Only with failover, around a dead server: noted again once it is over.
  if (server != home) [[unlikely]]
    NoteWriteAround(op, home, server);
  return op.status;
}

Status TokyoTyrantBackend::Get(std::string_view key, Item* out) {
  Operation op;
  op.kind = OpKind::kGet;
  op.key = key;
  // The caller's Item lends its buffer, so repeated reads reuse one allocation.
  std::swap(op.result, *out);
  Status s = RunOne(op);
  std::swap(op.result, *out);
  return s;
}

Status TokyoTyrantBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                                 const WriteOptions& options) {
  Operation op;
  op.kind = OpKind::kStore;
  op.mode = mode;
  op.key = key;
  op.item = item;
  op.ttl = options.ttl;
  op.noreply = options.noreply;
  return RunOne(op);
}

Status TokyoTyrantBackend::Remove(std::string_view key) {
  Operation op;
  op.kind = OpKind::kRemove;
  op.key = key;
  return RunOne(op);
}

Status TokyoTyrantBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  Operation op;
  op.kind = OpKind::kIncr;
  op.key = key;
  op.delta = delta;
  Status s = RunOne(op);
  if (s.ok() && value != nullptr) *value = op.counter;
  return s;
}

Status TokyoTyrantBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  Operation op;
  op.kind = OpKind::kDecr;
  op.key = key;
  op.delta = delta;
  Status s = RunOne(op);
  if (s.ok() && value != nullptr) *value = op.counter;
  return s;
}

void TokyoTyrantBackend::Execute(std::span<Operation> batch) { Run(batch); }

Status TokyoTyrantBackend::RoundTrip(
    std::size_t server, const std::string& request, ReplyShape shape,
    const std::function<Status(const Reply&, std::string_view)>& on_reply) {
  return RoundTripOn({&server, 1}, request, shape,
                     [&on_reply](std::size_t, const Reply& r, std::string_view buffer) {
                       return on_reply(r, buffer);
                     });
}

Status TokyoTyrantBackend::RoundTripAll(const std::string& request, ReplyShape shape,
                                        const ServerReplyFn& on_reply) {
  std::vector<std::size_t> all(pool_.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  return RoundTripOn(all, request, shape, on_reply);
}

Status TokyoTyrantBackend::RoundTripOn(std::span<const std::size_t> servers,
                                       const std::string& request, ReplyShape shape,
                                       const ServerReplyFn& on_reply) {
  std::vector<std::unique_ptr<OneReplyReader>> readers;
  std::vector<net::ServerBatch*> batches;
  std::vector<net::ServerRef> targets;
  for (const std::size_t server : servers) {
    readers.push_back(std::make_unique<OneReplyReader>(
        request, shape, [&on_reply, server](const Reply& r, std::string_view buffer) {
          return on_reply(server, r, buffer);
        }));
    batches.push_back(readers.back().get());
    targets.push_back({&pool_, server});
  }
  // A failed exchange has closed its connection: a half-read reply cannot be trusted.
  std::vector<Status> outcomes = net::RunOnEach(targets, batches, pool_.CallDeadline());
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].ok()) outcomes[i] = readers[i]->TakeResult();
    if (!outcomes[i].ok()) return std::move(outcomes[i]);
  }
  return Status::OK();
}

namespace {

// A command the server answered with a failure status (01).
Status CommandFailed(const net::ServerAddress& server, std::string_view command) {
  return Status::IoError("tokyotyrant " + server.HostPort() + ": " + std::string(command) +
                         " failed (status 01)");
}

}  // namespace

Status TokyoTyrantBackend::Flush() {
  std::string request;
  if (Status s = EncodeBare(Command::kVanish, &request); !s.ok()) return s;
  return RoundTripAll(request, ReplyShape::kStatus,
                      [&](std::size_t server, const Reply& r, std::string_view) {
                        return r.ok ? Status::OK() : CommandFailed(pool_.address(server), "vanish");
                      });
}

Status TokyoTyrantBackend::Stats(StatsMap* out) {
  std::string request;
  if (Status s = EncodeBare(Command::kStat, &request); !s.ok()) return s;
  out->clear();
  // Replies arrive in any order: each server's lines are kept apart, then
  // joined in configuration order.
  std::vector<StatsMap> per_server(pool_.size());
  Status status = RoundTripAll(
      request, ReplyShape::kBytes,
      [&](std::size_t server, const Reply& r, std::string_view buffer) {
        if (!r.ok) return CommandFailed(pool_.address(server), "stat");
        const std::string prefix = pool_.address(server).HostPort() + " ";
        std::string_view text = r.Field(buffer, 0);
        // "name\tvalue\n" lines; a line without a tab is skipped.
        while (!text.empty()) {
          const std::size_t end = std::min(text.find('\n'), text.size());
          const std::string_view line = text.substr(0, end);
          text.remove_prefix(std::min(end + 1, text.size()));
          const std::size_t tab = line.find('\t');
          if (tab == std::string_view::npos) continue;
          per_server[server].emplace_back(prefix + std::string(line.substr(0, tab)),
                                          std::string(line.substr(tab + 1)));
        }
        return Status::OK();
      });
  for (StatsMap& lines : per_server) {
    for (auto& line : lines) out->push_back(std::move(line));
  }
  return status;
}

}  // namespace cachet::tokyotyrant
