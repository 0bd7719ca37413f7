// Backend's out-of-line destructor (its one vtable lives in libcachet), the
// default bodies of optional operations, and the one-by-one batch runner.
#include "cachet/backend.h"

#include <array>
#include <string>

namespace cachet {

namespace {
constexpr std::array kAllCapabilities = {
    Capability::kNativeTtl,  Capability::kCas,        Capability::kAppendPrepend,
    Capability::kTouch,      Capability::kCounters,   Capability::kNativeFlags,
    Capability::kPersistence, Capability::kNoreply,   Capability::kPipelining,
    Capability::kFlush,      Capability::kStats,      Capability::kGetAndTouch,
    Capability::kNativeLease, Capability::kInvalidations, Capability::kSecondTtl,
};
}  // namespace

std::string_view CapabilityName(Capability c) noexcept {
  switch (c) {
    case Capability::kNativeTtl: return "ttl";
    case Capability::kCas: return "cas";
    case Capability::kAppendPrepend: return "append_prepend";
    case Capability::kTouch: return "touch";
    case Capability::kCounters: return "counters";
    case Capability::kNativeFlags: return "flags";
    case Capability::kPersistence: return "persistence";
    case Capability::kNoreply: return "noreply";
    case Capability::kPipelining: return "pipelining";
    case Capability::kFlush: return "flush";
    case Capability::kStats: return "stats";
    case Capability::kGetAndTouch: return "get_and_touch";
    case Capability::kNativeLease: return "native_lease";
    case Capability::kInvalidations: return "invalidations";
    case Capability::kSecondTtl: return "second_ttl";
  }
  return "unknown";
}

std::span<const Capability> AllCapabilities() noexcept { return kAllCapabilities; }

std::string_view StoreModeName(StoreMode mode) noexcept {
  switch (mode) {
    case StoreMode::kSet: return "set";
    case StoreMode::kAdd: return "add";
    case StoreMode::kReplace: return "replace";
    case StoreMode::kAppend: return "append";
    case StoreMode::kPrepend: return "prepend";
    case StoreMode::kCas: return "cas";
  }
  return "unknown";
}

Backend::~Backend() = default;
InvalidationListener::~InvalidationListener() = default;
InvalidationSubscription::~InvalidationSubscription() = default;

Status Backend::UnsupportedOperation(std::string_view operation) const {
  std::string msg(name());
  msg += " does not support ";
  msg += operation;
  return Status::Unsupported(msg);
}

Status Backend::Incr(std::string_view, std::uint64_t, std::uint64_t*) {
  return UnsupportedOperation("incr");
}
Status Backend::Decr(std::string_view, std::uint64_t, std::uint64_t*) {
  return UnsupportedOperation("decr");
}
Status Backend::Touch(std::string_view, Ttl) { return UnsupportedOperation("touch"); }
Status Backend::GetAndTouch(std::string_view, Ttl, Item*) {
  return UnsupportedOperation("get_and_touch");
}
Status Backend::Flush() { return UnsupportedOperation("flush"); }
Status Backend::Gets(std::string_view key, Item* out) { return Get(key, out); }
Status Backend::LeaseGet(std::string_view, const LeaseRequest&, Item*, LeaseGrant* grant,
                         std::uint64_t* lease_cas) {
  *grant = LeaseGrant::kNone;
  *lease_cas = 0;
  return UnsupportedOperation("lease_get");
}
Status Backend::EndLease(std::string_view, const LeaseTicket&, LeaseEnd) {
  return UnsupportedOperation("end_lease");
}

Status Backend::Health(std::vector<ServerHealth>*) const { return UnsupportedOperation("health"); }
Status Backend::SubscribeInvalidations(std::span<const std::string>, InvalidationListener*,
                                       std::unique_ptr<InvalidationSubscription>*) {
  return UnsupportedOperation("invalidations");
}
Status Backend::Stats(StatsMap*) { return UnsupportedOperation("stats"); }
Status Backend::Extension(std::string_view command, std::span<const std::string>,
                          std::vector<std::string>*) {
  return UnsupportedOperation("extension command '" + std::string(command) + "'");
}

void Backend::Execute(std::span<Operation> batch) {
  for (Operation& op : batch) ExecuteOne(*this, op);
}

Status NegativeTtlError(std::string_view store) {
  std::string msg(store);
  msg += ": a TTL must not be negative (0 means no expiry)";
  return Status::InvalidArgument(msg);
}

void ExecuteOne(Backend& backend, Operation& op) {
  switch (op.kind) {
    case OpKind::kGet:
      op.status = op.want_cas ? backend.Gets(op.key, &op.result) : backend.Get(op.key, &op.result);
      return;
    case OpKind::kStore:
      op.status = backend.Store(op.mode, op.key, op.item, WriteOptions{op.ttl, op.noreply});
      return;
    case OpKind::kRemove:
      op.status = backend.Remove(op.key);
      return;
    case OpKind::kIncr:
      op.status = backend.Incr(op.key, op.delta, &op.counter);
      return;
    case OpKind::kDecr:
      op.status = backend.Decr(op.key, op.delta, &op.counter);
      return;
    case OpKind::kTouch:
      op.status = backend.Touch(op.key, op.ttl);
      return;
  }
  op.status = Status::Internal("unknown operation kind");
}

}  // namespace cachet
