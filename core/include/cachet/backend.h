// Backend: the interface a store plugin implements. Bytes in, bytes out.
//
// A Backend stores Items (value bytes, flags, CAS) under keys. It knows nothing of
// typed values, serializers or compressors: the Codec and the Cache (cache.h) do
// that. It validates keys and values against its own protocol's rules before a
// byte leaves the process (a key that would inject a command must never reach
// the wire).
//
// Outcomes: ok; kNotFound for a miss or an absent key; kNotStored and kExists for
// failed preconditions; anything else is an error (see status.h). An operation the
// store cannot do returns kUnsupported naming the store and the operation.
//
// Thread safety: every Backend must be safe to call from several threads at once.
// Backends are created by plugins (plugin.h) and owned by shared_ptr; the plugin's
// library stays loaded while any Backend it created is alive.
//
// Compatibility: new operations are added as virtuals with a default body that
// returns kUnsupported, so plugins built against an older header keep working.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/health.h"
#include "cachet/invalidation.h"
#include "cachet/item.h"
#include "cachet/status.h"

namespace cachet {

// What a store does natively. The core emulates kNativeTtl and kNativeFlags through
// a value envelope (envelope.h) for stores that lack them.
enum class Capability : std::uint32_t {
  kNativeTtl = 1u << 0,      // per-item expiry
  kCas = 1u << 1,            // compare-and-swap tokens
  kAppendPrepend = 1u << 2,  // append and prepend
  kTouch = 1u << 3,          // change the TTL without a write
  kCounters = 1u << 4,       // atomic incr/decr
  kNativeFlags = 1u << 5,    // 32-bit flags stored beside the value
  kPersistence = 1u << 6,    // survives a restart of the store
  kNoreply = 1u << 7,        // writes without waiting for a reply
  kPipelining = 1u << 8,     // Execute() sends a batch in one round trip per server
  kFlush = 1u << 9,          // remove everything
  kStats = 1u << 10,         // server statistics
  kGetAndTouch = 1u << 11,   // read and reset the TTL in one call
  kNativeLease = 1u << 12,   // LeaseGet/EndLease: the store arbitrates GetOrCompute's loaders
  kInvalidations = 1u << 13,  // SubscribeInvalidations: tells which keys others changed
  // TTLs kept in whole seconds on a clock that ticks once a second (memcached):
  // an item may expire up to a second before its TTL.
  kSecondTtl = 1u << 14,
};

class Capabilities {
 public:
  constexpr Capabilities() = default;
  constexpr explicit Capabilities(std::uint32_t bits) : bits_(bits) {}
  constexpr Capabilities(std::initializer_list<Capability> caps) {
    for (Capability c : caps) bits_ |= static_cast<std::uint32_t>(c);
  }
  constexpr bool has(Capability c) const { return (bits_ & static_cast<std::uint32_t>(c)) != 0; }
  constexpr Capabilities with(Capability c) const {
    return Capabilities(bits_ | static_cast<std::uint32_t>(c));
  }
  constexpr Capabilities without(Capability c) const {
    return Capabilities(bits_ & ~static_cast<std::uint32_t>(c));
  }
  constexpr std::uint32_t bits() const { return bits_; }
  friend constexpr bool operator==(Capabilities, Capabilities) = default;

 private:
  std::uint32_t bits_ = 0;
};

// "native_ttl", "cas", ... and the list of all, in bit order.
CACHET_EXPORT std::string_view CapabilityName(Capability c) noexcept;
CACHET_EXPORT std::span<const Capability> AllCapabilities() noexcept;

enum class StoreMode : std::uint8_t {
  kSet,      // store unconditionally
  kAdd,      // only if absent; else kNotStored
  kReplace,  // only if present; else kNotStored
  kAppend,   // add bytes after the value; missing key: kNotStored
  kPrepend,  // add bytes before the value; missing key: kNotStored
  kCas,      // only if the CAS token still matches: kExists if changed, kNotFound if gone
};
CACHET_EXPORT std::string_view StoreModeName(StoreMode mode) noexcept;

struct WriteOptions {
  Ttl ttl{0};            // 0: never expires; negative: kInvalidArgument
  bool noreply = false;  // do not wait for the reply, where the store supports it
};

// What LeaseGet asks for (stores with kNativeLease).
struct LeaseRequest {
  Ttl lease{0};  // a won lease lapses after this unless EndLease ends it first
  // Also lease a present item, for a refresh, when its remaining TTL is below
  // this (memcached's R); Ttl::max(): whatever its TTL; 0: only a missing key.
  Ttl recache_below{0};
  // Who asks: a token unique to this claim (GetOrCompute draws 128 random
  // bits). A store whose lease is a lock key keeps it as the lock's value, so
  // EndLease removes the lock only while it still holds this token.
  std::string_view owner;
};

// A won lease as its holder ends it (Backend::EndLease): enough for the store
// to end this lease and never a later one that another caller took after it
// lapsed.
struct LeaseTicket {
  std::string_view owner;  // the LeaseRequest::owner of the LeaseGet that won it
  // The store's own token for the lease, from LeaseGet (memcached meta: the
  // CAS of the item the win was given on, placeholder or value); 0: none.
  std::uint64_t cas = 0;
};

// What LeaseGet says about the key's lease.
enum class LeaseGrant : std::uint8_t {
  kNone,  // no lease involved: a hit to serve, or a key the store cannot lease
  kWon,   // this caller holds the lease: it loads and stores the value, then EndLease
  kHeld,  // another caller holds it: wait for its value, or serve the item read
};

// How the holder ends a lease (Backend::EndLease).
enum class LeaseEnd : std::uint8_t {
  kKept,            // the key holds a value now: the holder's, or one it found
  kAbandonMiss,     // gave up on a missing key: the next LeaseGet wins at once
  kAbandonRefresh,  // gave up refreshing a present item: it stays, marked for refresh
};

// One operation of a batch (Backend::Execute). Inputs first, then outputs that
// Execute fills. Keys and values are borrowed: they must outlive the call.
enum class OpKind : std::uint8_t { kGet, kStore, kRemove, kIncr, kDecr, kTouch };

struct Operation {
  OpKind kind = OpKind::kGet;
  StoreMode mode = StoreMode::kSet;  // kStore only
  std::string_view key;
  ItemView item;            // kStore: value, flags, and cas for kCas
  Ttl ttl{0};               // kStore, kTouch; negative: kInvalidArgument
  std::uint64_t delta = 0;  // kIncr, kDecr
  bool noreply = false;     // kStore, kRemove, kIncr, kDecr, kTouch
  // kGet: fill result.cas on a hit, as Gets() does (a store that computes the
  // token only on request, Redis, computes it for these reads alone). In the
  // padding after `noreply`: no other field moves, so the plugin ABI is the same.
  bool want_cas = false;

  Status status;              // outcome of this operation
  Item result;                // kGet: the item on a hit
  std::uint64_t counter = 0;  // kIncr, kDecr: the new value
};

class CACHET_EXPORT Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend();

  // The store's name as in the config ("memory", "memcached", ...).
  virtual std::string_view name() const noexcept = 0;
  virtual Capabilities capabilities() const noexcept = 0;

  // Reads `key` into `*out` (value, flags, cas). kNotFound on a miss.
  // `out` may be reused across calls so its buffer is recycled. A store whose
  // token costs work on every read may leave cas 0 here and fill it in Gets().
  virtual Status Get(std::string_view key, Item* out) = 0;

  virtual Status Store(StoreMode mode, std::string_view key, ItemView item,
                       const WriteOptions& options) = 0;

  // kNotFound if the key was absent.
  virtual Status Remove(std::string_view key) = 0;

  // Unsigned 64-bit counters on decimal text values, as memcached: incr wraps at
  // 2^64, decr stops at 0, a missing key is kNotFound, a non-number is
  // kInvalidArgument. Stores with other semantics document them.
  virtual Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value);
  virtual Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value);

  // Sets a new TTL on an existing key; kNotFound if absent. Ttl{0} removes the
  // expiry; a negative TTL is kInvalidArgument (NegativeTtlError) and changes nothing.
  virtual Status Touch(std::string_view key, Ttl ttl);
  virtual Status GetAndTouch(std::string_view key, Ttl ttl, Item* out);

  virtual Status Flush();
  // Each server's statistics ("host:port name" with several servers): the
  // lines of every server that answered, even when another did not, whose
  // failure (naming it) is returned.
  virtual Status Stats(StatsMap* out);

  // Runs a batch, filling each operation's outputs. Stores with kPipelining send
  // the whole batch at once (one round trip per server); the default runs the
  // operations one by one. Never fails as a whole: each operation has its Status.
  virtual void Execute(std::span<Operation> batch);

  // Store-specific commands that the generic API does not cover (for example
  // Tokyo Tyrant's prefix listing). The plugin documents its commands.
  virtual Status Extension(std::string_view command, std::span<const std::string> args,
                           std::vector<std::string>* reply);

  // Get() with the CAS token filled in, for a compare-and-swap to follow. The
  // default is Get(); Redis derives its token from the value's bytes and
  // computes it only here, so plain reads do not pay for it.
  virtual Status Gets(std::string_view key, Item* out);

  // Stores with kNativeLease: GetOrCompute's lease with the store's own
  // mechanism, in the read's round trip. Reads `key` like Get() (kNotFound on a
  // miss) and, on a miss or for a present item the request asks to recache,
  // takes a lease on it if nobody holds one; `*grant` says who holds it, and
  // on kWon `*lease_cas` is the store's token for the lease (LeaseTicket::cas).
  // The default is kUnsupported: GetOrCompute then uses an add-based lease key.
  // REQUIRES: capabilities() has kNativeLease (the Cache calls it only then).
  virtual Status LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                          LeaseGrant* grant, std::uint64_t* lease_cas);
  // Ends the lease LeaseGet granted with `ticket`, and no other: a lease that
  // lapsed and was won by another caller is left to its new holder (ok).
  // REQUIRES: capabilities() has kNativeLease (the Cache calls it only then).
  virtual Status EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end);
  // Appends the health of each of the store's servers, as its net::ServerPool
  // keeps it (ServerPool::AppendHealth). The default, for a store without
  // servers, is kUnsupported and appends nothing.
  virtual Status Health(std::vector<ServerHealth>* out) const;

  // Stores with kInvalidations: tells `listener` about every change to a key
  // that starts with one of `prefixes` (all keys when empty), by anyone, until
  // `*subscription` is destroyed (invalidation.h says what is called when). The
  // default is kUnsupported: a near cache then expires its entries by time.
  // `listener` must outlive `*subscription`, which must not outlive this backend.
  // REQUIRES: capabilities() has kInvalidations (the near cache calls it only then).
  virtual Status SubscribeInvalidations(std::span<const std::string> prefixes,
                                        InvalidationListener* listener,
                                        std::unique_ptr<InvalidationSubscription>* subscription);

 protected:
  // kUnsupported naming this store and `operation`.
  Status UnsupportedOperation(std::string_view operation) const;
};

// The answer to a negative TTL, from the core and from every bundled store:
// kInvalidArgument naming `store`. Callers test `ttl.count() < 0` themselves;
// this words the refusal.
CACHET_EXPORT Status NegativeTtlError(std::string_view store);

// Runs one operation of a batch through the single-key calls of `backend`.
// Plugins use it for the operations their Execute does not pipeline.
CACHET_EXPORT void ExecuteOne(Backend& backend, Operation& op);

}  // namespace cachet
