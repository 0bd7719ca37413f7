// EnvelopeBackend: flags and expiry kept in the value for stores without them.
// See envelope_backend.h for the contract and docs/value-format.md for the bytes.
#include "envelope_backend.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "decimal_text.h"
#include "envelope_format.h"
#include "near_cache.h"

namespace cachet {

namespace {

// The cachet profile's flags for an uncompressed integer. Stored raw, so the
// store's own counters work on it; an integer reads back from raw decimal anyway.
constexpr std::uint32_t kPlainIntegerFlags = 1;

// Conflicting writers get this many read-modify-write attempts before we give up.
constexpr int kMaxRewriteAttempts = 16;

std::uint64_t NowMs() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count());
}

// 0 for no expiry. The sum of two counts below 2^63 cannot wrap in 64 unsigned
// bits, so even Ttl::max() is an expiry the header keeps exactly.
// REQUIRES: ttl is not negative (the public calls refuse it first).
std::uint64_t ExpiryFor(Ttl ttl) {
  if (ttl.count() <= 0) return 0;
  return NowMs() + static_cast<std::uint64_t>(ttl.count());
}

bool Expired(const EnvelopeHeader& header) {
  return header.expires_at_ms != 0 && header.expires_at_ms <= NowMs();
}

// True if appending `bytes` to a value shorter than the magic could make the
// value begin with the magic (the short value being the magic's first bytes).
bool CouldCompleteMagic(std::string_view bytes) {
  for (std::size_t taken = 0; taken < kEnvelopeMagic.size(); ++taken) {
    if (bytes.starts_with(kEnvelopeMagic.substr(taken))) return true;
  }
  return false;
}

Status NotSafeWithoutCas(std::string_view store, std::string_view operation) {
  return Status::Unsupported(std::string(store) + ": " + std::string(operation) +
                             " on a value whose flags or expiry cachet keeps in the value "
                             "would damage it, and this store has no CAS to do it safely");
}

}  // namespace

EnvelopeBackend::EnvelopeBackend(std::shared_ptr<Backend> inner)
    : inner_(std::move(inner)),
      native_flags_(inner_->capabilities().has(Capability::kNativeFlags)),
      native_ttl_(inner_->capabilities().has(Capability::kNativeTtl)),
      can_rewrite_(!native_ttl_ && inner_->capabilities().has(Capability::kCas)),
      capabilities_(CapabilitiesThroughCache(inner_->capabilities())),
      emulated_(capabilities_.bits() & ~inner_->capabilities().bits()) {}

// ---- packing and opening ----------------------------------------------------

EnvelopeBackend::Packed EnvelopeBackend::Pack(ItemView item, Ttl ttl, std::string* buffer) const {
  EnvelopeHeader header;
  if (!native_flags_ && item.flags != kPlainIntegerFlags) header.flags = item.flags;
  if (!native_ttl_) header.expires_at_ms = ExpiryFor(ttl);
  Packed packed;
  packed.flags = native_flags_ ? item.flags : 0;
  packed.ttl = native_ttl_ ? ttl : Ttl{0};
  // A raw value that starts with the magic is enveloped too, so no value cachet
  // stores raw ever starts with it (which keeps append's check cheap).
  if (header.flags == 0 && header.expires_at_ms == 0 && !item.value.starts_with(kEnvelopeMagic)) {
    packed.value = item.value;
    return packed;
  }
  buffer->clear();
  EncodeEnvelope(header, item.value, buffer);
  packed.value = *buffer;
  return packed;
}

Status EnvelopeBackend::OpenEnveloped(Item* item) {
  EnvelopeHeader header;
  if (!ReadEnvelopeHeader(item->value, &header)) {
    // The magic without a whole header: another program's bytes, read raw.
    if (!native_flags_) item->flags = 0;
    return Status::OK();
  }
  // Expired: a miss, and the value stays where it is. Removing it here could
  // remove a value another client wrote since the read; the next write replaces it.
  if (Expired(header)) return Status::NotFound();
  if (!native_flags_) item->flags = header.flags;
  item->value.erase(0, kEnvelopeHeaderSize);
  return Status::OK();
}

Status EnvelopeBackend::ReadOpened(std::string_view key, Item* raw, Opened* opened) {
  Status s = inner_->Gets(key, raw);  // the rewrite needs the token
  if (!s.ok()) return s;
  Item copy = *raw;
  s = Open(&copy);
  if (!s.ok()) return s;
  opened->header.flags = copy.flags;
  opened->header.expires_at_ms = 0;
  if (HasEnvelope(raw->value)) {
    std::string_view ignored;
    (void)DecodeEnvelope(raw->value, &opened->header, &ignored);  // Open checked it
    if (native_flags_) opened->header.flags = raw->flags;
  }
  opened->payload = std::move(copy.value);
  return Status::OK();
}

Status EnvelopeBackend::Rewrite(std::string_view key, const Mutation& mutate, Opened* result) {
  for (int attempt = 0; attempt < kMaxRewriteAttempts; ++attempt) {
    Item raw;
    Opened opened;
    Status s = ReadOpened(key, &raw, &opened);
    if (!s.ok()) return s;
    s = mutate(opened);
    if (!s.ok()) return s;
    EnvelopeHeader stored_header = opened.header;
    if (native_flags_ || stored_header.flags == kPlainIntegerFlags) stored_header.flags = 0;
    std::string buffer;
    std::string_view stored = opened.payload;
    if (stored_header.flags != 0 || stored_header.expires_at_ms != 0 ||
        opened.payload.starts_with(kEnvelopeMagic)) {
      EncodeEnvelope(stored_header, opened.payload, &buffer);
      stored = buffer;
    }
    const ItemView write(stored, native_flags_ ? opened.header.flags : 0, raw.cas);
    s = inner_->Store(StoreMode::kCas, key, write, WriteOptions{});
    if (s.IsExists()) continue;  // another writer got there first: read again
    if (s.ok() && result != nullptr) *result = std::move(opened);
    return s;
  }
  return Status::Exists(std::string(name()) + ": '" + std::string(key) + "' changed " +
                        std::to_string(kMaxRewriteAttempts) + " times while being rewritten");
}

// ---- single operations ------------------------------------------------------

Status EnvelopeBackend::Get(std::string_view key, Item* out) {
  Status s = inner_->Get(key, out);
  if (!s.ok()) return s;
  return Open(out);
}

// The token is that of the stored bytes, header included, which is what a
// later kCas store compares against.
Status EnvelopeBackend::Gets(std::string_view key, Item* out) {
  Status s = inner_->Gets(key, out);
  if (!s.ok()) return s;
  return Open(out);
}

Status EnvelopeBackend::StorePacked(StoreMode mode, std::string_view key, ItemView item,
                                    const WriteOptions& options) {
  std::string buffer;
  const Packed packed = Pack(item, options.ttl, &buffer);
  return inner_->Store(mode, key, ItemView(packed.value, packed.flags, item.cas),
                       WriteOptions{packed.ttl, options.noreply});
}

Status EnvelopeBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                              const WriteOptions& options) {
  if (options.ttl.count() < 0) return NegativeTtlError(name());
  switch (mode) {
    case StoreMode::kSet:
    case StoreMode::kCas:
      return StorePacked(mode, key, item, options);
    case StoreMode::kAdd:
      return Add(key, item, options);
    case StoreMode::kReplace:
      return Replace(key, item, options);
    case StoreMode::kAppend:
      return Append(key, item, options);
    case StoreMode::kPrepend:
      return Prepend(key, item, options);
  }
  return Status::InvalidArgument("unknown store mode");
}

bool EnvelopeBackend::HoldsExpired(std::string_view key, std::uint64_t* cas) {
  Item raw;
  if (!inner_->Gets(key, &raw).ok() || !HasEnvelope(raw.value)) return false;
  *cas = raw.cas;
  return Open(&raw).IsNotFound();
}

Status EnvelopeBackend::OverwriteExpired(std::string_view key, ItemView item,
                                         const WriteOptions& options, std::uint64_t cas) {
  if (!inner_->capabilities().has(Capability::kCas)) {
    // Without CAS a value written since the check could be overwritten; the add
    // then behaves as if it came just after that write.
    return StorePacked(StoreMode::kSet, key, item, options);
  }
  Status s = StorePacked(StoreMode::kCas, key, ItemView(item.value, item.flags, cas), options);
  // Changed or removed since the check: present again, or absent with an add to do.
  if (s.IsExists()) return Status::NotStored();
  if (s.IsNotFound()) return StorePacked(StoreMode::kAdd, key, item, options);
  return s;
}

Status EnvelopeBackend::Add(std::string_view key, ItemView item, const WriteOptions& options) {
  Status s = StorePacked(StoreMode::kAdd, key, item, options);
  // The inner store still holds values that expired in the envelope: an add over
  // one of them must succeed, and it overwrites the expired value in place.
  std::uint64_t cas = 0;
  if (s.IsNotStored() && !native_ttl_ && HoldsExpired(key, &cas)) {
    s = OverwriteExpired(key, item, options, cas);
  }
  return s;
}

Status EnvelopeBackend::Replace(std::string_view key, ItemView item, const WriteOptions& options) {
  // A value expired in the envelope is absent: replacing it must not store.
  std::uint64_t cas = 0;
  if (!native_ttl_ && HoldsExpired(key, &cas)) return Status::NotStored();
  return StorePacked(StoreMode::kReplace, key, item, options);
}

Status EnvelopeBackend::Append(std::string_view key, ItemView item, const WriteOptions& options) {
  if (!native_ttl_ || CouldCompleteMagic(item.value)) {
    Item raw;
    Status s = inner_->Get(key, &raw);
    if (s.IsNotFound()) return Status::NotStored();
    if (!s.ok()) return s;
    const bool enveloped = HasEnvelope(raw.value);
    if (enveloped && Open(&raw).IsNotFound()) return Status::NotStored();  // expired
    if (!enveloped && raw.value.size() < kEnvelopeMagic.size() &&
        (raw.value + std::string(item.value.substr(0, kEnvelopeMagic.size())))
            .starts_with(kEnvelopeMagic)) {
      return Status::Unsupported(std::string(name()) +
                                 ": append would make the value begin with cachet's envelope "
                                 "magic, and it would no longer read back as written");
    }
  }
  // Appended bytes land after the payload, so an enveloped value stays whole.
  const ItemView bytes(item.value, native_flags_ ? item.flags : 0);
  return inner_->Store(StoreMode::kAppend, key, bytes,
                       WriteOptions{native_ttl_ ? options.ttl : Ttl{0}, options.noreply});
}

Status EnvelopeBackend::Prepend(std::string_view key, ItemView item, const WriteOptions& options) {
  // A store that declares no append and prepend gets neither from cachet: were
  // prepend rewritten through CAS while the store refuses append, a batch of
  // both would do half of what the capabilities say is not done at all.
  if (!inner_->capabilities().has(Capability::kAppendPrepend)) {
    return UnsupportedOperation("prepend");
  }
  if (can_rewrite_) {
    Status s = Rewrite(key, [&](Opened& v) {
      v.payload.insert(0, item.value);
      return Status::OK();
    });
    return s.IsNotFound() ? Status::NotStored() : s;
  }
  // No CAS: check the value first and refuse whenever a prepend could damage it.
  Item raw;
  Status s = inner_->Get(key, &raw);
  if (s.IsNotFound()) return Status::NotStored();
  if (!s.ok()) return s;
  if (HasEnvelope(raw.value)) {
    if (Open(&raw).IsNotFound()) return Status::NotStored();  // expired
    return NotSafeWithoutCas(name(), "prepend");
  }
  if ((std::string(item.value) + raw.value.substr(0, kEnvelopeMagic.size()))
          .starts_with(kEnvelopeMagic)) {
    return NotSafeWithoutCas(name(), "a prepend that forms the envelope magic");
  }
  const ItemView bytes(item.value, native_flags_ ? item.flags : 0);
  return inner_->Store(StoreMode::kPrepend, key, bytes,
                       WriteOptions{native_ttl_ ? options.ttl : Ttl{0}, options.noreply});
}

Status EnvelopeBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter(true, key, delta, value);
}

Status EnvelopeBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Counter(false, key, delta, value);
}

Status EnvelopeBackend::Counter(bool incr, std::string_view key, std::uint64_t delta,
                                std::uint64_t* value) {
  // Raw decimal values count natively. An enveloped value starts with the magic,
  // which no store reads as a number, so the inner store refuses it unchanged.
  Status s = incr ? inner_->Incr(key, delta, value) : inner_->Decr(key, delta, value);
  if (!s.IsInvalidArgument()) return s;
  return CounterOnEnvelope(incr, key, delta, value, std::move(s));
}

Status EnvelopeBackend::CounterOnEnvelope(bool incr, std::string_view key, std::uint64_t delta,
                                          std::uint64_t* value, Status inner_status) {
  Item raw;
  Status s = inner_->Get(key, &raw);
  // No value, or a raw one: the refusal was not about an envelope, so it is the store's answer.
  if (s.IsNotFound()) return inner_status;
  if (!s.ok()) return s;
  if (!HasEnvelope(raw.value)) return inner_status;
  if (Open(&raw).IsNotFound()) return Status::NotFound();  // expired
  if (!can_rewrite_) return NotSafeWithoutCas(name(), incr ? "incr" : "decr");
  std::uint64_t result = 0;
  s = Rewrite(key, [&](Opened& v) {
    std::uint64_t current = 0;
    Status parsed = ParseInteger(v.payload, &current);
    if (!parsed.ok()) return parsed;
    // memcached's rules: incr wraps at 2^64, decr stops at 0.
    result = incr ? current + delta : (current > delta ? current - delta : 0);
    FormatInteger(result, &v.payload);
    return Status::OK();
  });
  if (s.ok()) *value = result;
  return s;
}

Status EnvelopeBackend::Touch(std::string_view key, Ttl ttl) {
  if (ttl.count() < 0) return NegativeTtlError(name());
  if (native_ttl_) return inner_->Touch(key, ttl);
  if (!can_rewrite_) return UnsupportedOperation("touch (no native TTL and no CAS)");
  return Rewrite(key, [&](Opened& v) {
    v.header.expires_at_ms = ExpiryFor(ttl);
    return Status::OK();
  });
}

Status EnvelopeBackend::GetAndTouch(std::string_view key, Ttl ttl, Item* out) {
  if (ttl.count() < 0) return NegativeTtlError(name());
  if (native_ttl_) {
    Status s = inner_->GetAndTouch(key, ttl, out);
    return s.ok() ? Open(out) : s;
  }
  if (!can_rewrite_) return UnsupportedOperation("get_and_touch (no native TTL and no CAS)");
  Opened result;
  Status s = Rewrite(
      key,
      [&](Opened& v) {
        v.header.expires_at_ms = ExpiryFor(ttl);
        return Status::OK();
      },
      &result);
  if (!s.ok()) return s;
  out->value = std::move(result.payload);
  out->flags = result.header.flags;
  out->cas = 0;  // the rewrite made a new token that the inner store does not return
  return Status::OK();
}

// ---- batches ----------------------------------------------------------------

bool EnvelopeBackend::Pipelineable(const Operation& op) const {
  // One by one, a negative TTL meets the refusal in Store() or Touch().
  if (op.ttl.count() < 0) return false;
  switch (op.kind) {
    case OpKind::kGet:
    case OpKind::kRemove:
    case OpKind::kIncr:
    case OpKind::kDecr:
      return true;
    case OpKind::kTouch:
      return native_ttl_;
    case OpKind::kStore:
      break;
  }
  switch (op.mode) {
    case StoreMode::kSet:
    case StoreMode::kCas:
      return true;
    case StoreMode::kAdd:
    case StoreMode::kReplace:
      return native_ttl_;
    case StoreMode::kAppend:
      return native_ttl_ && !CouldCompleteMagic(op.item.value);
    case StoreMode::kPrepend:
      return false;
  }
  return false;
}

void EnvelopeBackend::RunPipelined(std::span<Operation> run) {
  // Without stores there is nothing to pack: the inner store works on the
  // caller's operations themselves, which spares a copy of each one.
  const bool has_store = std::any_of(run.begin(), run.end(),
                                     [](const Operation& op) { return op.kind == OpKind::kStore; });
  if (!has_store) {
    inner_->Execute(run);
    for (Operation& op : run) FinishPipelined(op);
    return;
  }
  std::vector<Operation> inner_ops(run.begin(), run.end());
  std::vector<std::string> buffers(run.size());  // never resized: views stay valid
  for (std::size_t i = 0; i < run.size(); ++i) {
    Operation& op = inner_ops[i];
    if (op.kind == OpKind::kStore && op.mode == StoreMode::kAppend) {
      // Appended bytes are never enveloped: they go after whatever is stored.
      op.item = ItemView(run[i].item.value, native_flags_ ? run[i].item.flags : 0);
    } else if (op.kind == OpKind::kStore) {
      const Packed packed = Pack(run[i].item, run[i].ttl, &buffers[i]);
      op.item = ItemView(packed.value, packed.flags, run[i].item.cas);
      op.ttl = packed.ttl;
    }
  }
  inner_->Execute(inner_ops);
  for (std::size_t i = 0; i < run.size(); ++i) {
    Operation& op = run[i];
    op.status = std::move(inner_ops[i].status);
    op.counter = inner_ops[i].counter;
    if (op.kind == OpKind::kGet) op.result = std::move(inner_ops[i].result);
    FinishPipelined(op);
  }
}

void EnvelopeBackend::FinishPipelined(Operation& op) {
  if (op.kind == OpKind::kGet) {
    if (!op.status.ok()) return;
    op.status = Open(&op.result);
  } else if ((op.kind == OpKind::kIncr || op.kind == OpKind::kDecr) &&
             op.status.IsInvalidArgument()) {
    op.status = CounterOnEnvelope(op.kind == OpKind::kIncr, op.key, op.delta, &op.counter,
                                  std::move(op.status));
  }
}

std::size_t EnvelopeBackend::RunEnd(std::span<const Operation> batch, std::size_t begin) const {
  // A counter the store refused is decided after its run by reading its key
  // (FinishPipelined): redone on an envelope where values can be rewritten, so
  // a later operation on its key goes in the next run, after it; refused as
  // unsafe where not, so a later write of its key (which that read would find
  // instead) goes in the next run. Counters in a row on one key share a run: a
  // refused one changes nothing, so on an enveloped value all are refused and
  // redone in batch order, and one refused for its own reason (a delta the store
  // cannot take) keeps that refusal (CounterOnEnvelope) whatever follows it.
  std::unordered_set<std::string_view> counted;  // allocates only once a counter comes
  std::size_t end = begin;
  for (; end < batch.size() && Pipelineable(batch[end]); ++end) {
    const Operation& op = batch[end];
    const bool counter = op.kind == OpKind::kIncr || op.kind == OpKind::kDecr;
    if (!counter && !counted.empty() && (can_rewrite_ || op.kind != OpKind::kGet) &&
        counted.contains(op.key)) {
      break;
    }
    if (counter) counted.insert(op.key);
  }
  return end;
}

void EnvelopeBackend::Execute(std::span<Operation> batch) {
  // Consecutive operations the inner store can take as they are go to it in one
  // Execute call (pipelined); the others run one by one, in batch order.
  std::size_t next = 0;
  while (next < batch.size()) {
    const std::size_t end = RunEnd(batch, next);
    if (end == next) {
      ExecuteOne(*this, batch[next]);
      ++next;
      continue;
    }
    RunPipelined(batch.subspan(next, end - next));
    next = end;
  }
}

// ---- entry points -----------------------------------------------------------

Capabilities CapabilitiesThroughCache(Capabilities native) noexcept {
  if (native.has(Capability::kNativeFlags) && native.has(Capability::kNativeTtl)) return native;
  const Capabilities caps = native.with(Capability::kNativeFlags).with(Capability::kNativeTtl);
  if (native.has(Capability::kNativeTtl)) return caps;
  // Without native TTL, touch means rewriting the header: possible only with CAS.
  return native.has(Capability::kCas)
             ? caps.with(Capability::kTouch).with(Capability::kGetAndTouch)
             : caps.without(Capability::kTouch).without(Capability::kGetAndTouch);
}

std::shared_ptr<Backend> WithEnvelope(std::shared_ptr<Backend> inner) {
  if (inner == nullptr) return inner;
  const Capabilities caps = inner->capabilities();
  if (caps.has(Capability::kNativeFlags) && caps.has(Capability::kNativeTtl)) return inner;
  return std::make_shared<EnvelopeBackend>(std::move(inner));
}

Capabilities EmulatedCapabilities(const Backend& backend) noexcept {
  // A near cache sits in front of the envelope: look behind it.
  if (const auto* near_cache = dynamic_cast<const NearCache*>(&backend)) {
    return EmulatedCapabilities(near_cache->store());
  }
  const auto* envelope = dynamic_cast<const EnvelopeBackend*>(&backend);
  return envelope != nullptr ? envelope->emulated() : Capabilities();
}

}  // namespace cachet
