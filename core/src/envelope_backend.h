// EnvelopeBackend: the Backend decorator behind WithEnvelope() (envelope.h).
//
// It keeps flags and/or expiry inside the value for an inner store that lacks
// them, and stores everything else raw so other clients read it unchanged.
// Operations that could split a header are either done atomically through the
// inner store's CAS or refused with kUnsupported; none corrupts a value.
//
// Shares ownership of the inner Backend. Thread-safe as far as the inner store is:
// it keeps no mutable state of its own.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cachet/backend.h"
#include "cachet/envelope.h"
#include "envelope_format.h"

namespace cachet {

class EnvelopeBackend final : public Backend {
 public:
  // REQUIRES: `inner` is not null and lacks native flags or native TTL.
  explicit EnvelopeBackend(std::shared_ptr<Backend> inner);

  std::string_view name() const noexcept override { return inner_->name(); }
  Capabilities capabilities() const noexcept override { return capabilities_; }
  // The capabilities this decorator adds on top of the inner store.
  Capabilities emulated() const noexcept { return emulated_; }

  Status Get(std::string_view key, Item* out) override;
  Status Gets(std::string_view key, Item* out) override;
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override;
  Status Remove(std::string_view key) override { return inner_->Remove(key); }
  // The inner store's lease; a hit is opened like Get()'s.
  Status LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                  LeaseGrant* grant, std::uint64_t* lease_cas) override {
    Status s = inner_->LeaseGet(key, request, out, grant, lease_cas);
    return s.ok() ? Open(out) : s;
  }
  Status EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end) override {
    return inner_->EndLease(key, ticket, end);
  }
  // Keys are the inner store's own: its invalidations pass through unchanged.
  Status SubscribeInvalidations(std::span<const std::string> prefixes,
                                InvalidationListener* listener,
                                std::unique_ptr<InvalidationSubscription>* subscription) override {
    return inner_->SubscribeInvalidations(prefixes, listener, subscription);
  }
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override;
  Status Touch(std::string_view key, Ttl ttl) override;
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out) override;
  Status Flush() override { return inner_->Flush(); }
  Status Stats(StatsMap* out) override { return inner_->Stats(out); }
  Status Health(std::vector<ServerHealth>* out) const override { return inner_->Health(out); }
  void Execute(std::span<Operation> batch) override;
  Status Extension(std::string_view command, std::span<const std::string> args,
                   std::vector<std::string>* reply) override {
    return inner_->Extension(command, args, reply);
  }

 private:
  // What is handed to the inner store for one write.
  struct Packed {
    std::string_view value;
    std::uint32_t flags = 0;
    Ttl ttl{0};
  };
  // A value read back and opened: header fields and the payload bytes.
  struct Opened {
    EnvelopeHeader header;
    std::string payload;
  };
  // Changes an opened value in place; its Status aborts the rewrite.
  using Mutation = std::function<Status(Opened&)>;

  Packed Pack(ItemView item, Ttl ttl, std::string* buffer) const;
  // Strips the envelope from `*item` after a read. kNotFound for an expired
  // value, which stays stored (a read never removes: the next write overwrites
  // it). Bytes that start with the magic without a whole header are raw. Inline:
  // most values are stored raw, and every read of a batch asks.
  Status Open(Item* item) {
    if (!item->value.starts_with(kEnvelopeMagic)) {
      if (!native_flags_) item->flags = 0;
      return Status::OK();
    }
    return OpenEnveloped(item);
  }
  // Open() of a value that starts with the envelope's magic bytes.
  Status OpenEnveloped(Item* item);
  // Reads the inner item and opens it into `*opened` (header flags kept apart).
  Status ReadOpened(std::string_view key, Item* raw, Opened* opened);
  // Read, change, write back with CAS, retrying a bounded number of times on conflict.
  Status Rewrite(std::string_view key, const Mutation& mutate, Opened* result = nullptr);

  Status StorePacked(StoreMode mode, std::string_view key, ItemView item,
                     const WriteOptions& options);
  Status Add(std::string_view key, ItemView item, const WriteOptions& options);
  Status Replace(std::string_view key, ItemView item, const WriteOptions& options);
  Status Append(std::string_view key, ItemView item, const WriteOptions& options);
  Status Prepend(std::string_view key, ItemView item, const WriteOptions& options);
  Status Counter(bool incr, std::string_view key, std::uint64_t delta, std::uint64_t* value);
  Status CounterOnEnvelope(bool incr, std::string_view key, std::uint64_t delta,
                           std::uint64_t* value, Status inner_status);
  // True if the inner store holds a value expired in its envelope, whose stored
  // token goes to `*cas`: the key is absent to cachet's callers.
  bool HoldsExpired(std::string_view key, std::uint64_t* cas);
  // Writes over a value expired in its envelope (an add's second chance): with
  // CAS against `cas`, so a fresh value written meanwhile is never overwritten.
  Status OverwriteExpired(std::string_view key, ItemView item, const WriteOptions& options,
                          std::uint64_t cas);

  bool Pipelineable(const Operation& op) const;
  // The end of the run from `begin` the inner store takes in one Execute:
  // pipelineable operations, up to one whose key a counter of the run has.
  std::size_t RunEnd(std::span<const Operation> batch, std::size_t begin) const;
  void RunPipelined(std::span<Operation> run);
  // Opens a pipelined read's value, or retries a counter on an enveloped value.
  void FinishPipelined(Operation& op);

  std::shared_ptr<Backend> inner_;
  bool native_flags_;
  bool native_ttl_;
  bool can_rewrite_;  // CAS, and every expiry lives in the envelope
  Capabilities capabilities_;
  Capabilities emulated_;
};

}  // namespace cachet
