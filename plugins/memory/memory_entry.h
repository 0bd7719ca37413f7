// MemoryEntry: one stored item of the memory store.
//
// An entry is one heap block: a 16-byte header, the key bytes, the value bytes
// and then, only when they are not 0, the flags (4 bytes; cachet's own values of
// bytes have none), so a hit touches the table slot, the header and the bytes
// beside it and nothing else. Nothing else is kept per item: the hash table's
// slot holds the entry's pointer, a tag of its hash and the CLOCK mark
// (EntryTable), the limbo keeps retired entries in an array of its own, and the
// block's room is what the allocator says it is (malloc_usable_size).
//
// Readers take no lock. An entry's key and sizes never change once it is
// published in the table. A writer holds an entry (Hold: its own lock, the CAS
// in the stamp cleared) before it changes, reads or unlinks it. A write that
// keeps the value's size (and whether flags are stored) rewrites the value,
// flags and expiry in place and releases the entry with its new CAS
// (WriteHeld), so a reader copies, then checks that the stamp did not change
// (ReadInto, a sequence lock whose version is the CAS). Any other write builds
// a new entry, puts it in the old one's place and retires the old one (Limbo),
// held for good. The expiry is an atomic of its own (touch).
#pragma once

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <thread>

#include "write_lock.h"

// ThreadSanitizer builds, as GCC and Clang each say so (MemoryEntry::CopyBytes).
#if defined(__SANITIZE_THREAD__)
#define CACHET_MEMORY_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CACHET_MEMORY_TSAN 1
#endif
#endif

namespace cachet::memory {

// The largest key and value an entry can hold (its sizes are 16 and 32 bits).
inline constexpr std::size_t kLargestKey = 0xFFFF;
inline constexpr std::size_t kLargestValue = 0xFFFFFFFF;
// CAS tokens are 47 bits (the 48th says whether the flags are stored; 0 is no
// token): at a million writes a second a store takes four years to wrap.
inline constexpr std::uint64_t kLargestCas = (std::uint64_t{1} << 47) - 1;

// Expiry times as 32 bits: milliseconds of the steady clock since the process
// started using the store, up to 2^31 ms (24.8 days); past that, seconds with the
// top bit set, up to 2^31 s (68 years); past that, no expiry (the item outlives
// the process anyway). 0 is no expiry. Seconds are rounded up (an item never
// leaves early), or down (never late: a near cache's bound on staleness). The
// largest code, kRemoved, marks an entry removed in place: expired, whatever the time.
class ExpiryCode {
 public:
  static constexpr std::uint32_t kNever = 0;
  static constexpr std::uint32_t kRemoved = 0xFFFFFFFF;

  // The code for the steady-clock instant `at_ms`, 0 meaning never.
  static std::uint32_t Encode(std::int64_t at_ms, bool round_down = false) noexcept {
    if (at_ms == 0) return kNever;
    const std::int64_t since = at_ms - Base();
    if (since < 1) return 1;  // already due: the earliest instant there is
    if (since < kSecondsBit) return static_cast<std::uint32_t>(since);
    const std::int64_t seconds = round_down ? since / 1000 : (since + 999) / 1000;
    if (seconds >= kSecondsBit - 1) return kNever;  // the last code is kRemoved
    return kSecondsBit | static_cast<std::uint32_t>(seconds);
  }
  // The steady-clock instant of a code other than kNever.
  static std::int64_t Decode(std::uint32_t code) noexcept {
    if ((code & kSecondsBit) != 0) return Base() + std::int64_t{code & ~kSecondsBit} * 1000;
    return Base() + code;
  }
  // Steady-clock milliseconds when the store was first used in this process.
  static std::int64_t Base() noexcept {
    static const std::int64_t base = std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count();
    return base;
  }

 private:
  static constexpr std::uint32_t kSecondsBit = std::uint32_t{1} << 31;
};

struct MemoryEntry {
  // The CAS (bits 0-46; 0 while a write in place is under way), whether a flags
  // word follows the value (bit 47), and the key's size (bits 48-63).
  std::atomic<std::uint64_t> stamp{0};
  std::uint32_t value_size = 0;
  std::atomic<std::uint32_t> expires{ExpiryCode::kNever};  // ExpiryCode

  // The bytes after the header an entry of these sizes and flags needs.
  static std::size_t RoomFor(std::size_t key_size, std::size_t value_size,
                             std::uint32_t flags) noexcept {
    return (flags != 0 ? sizeof(std::uint32_t) : 0) + key_size + value_size;
  }

  // A block for `key` and `flags` with a value of `value_size` bytes, which the
  // caller then writes at value_data(). nullptr when memory runs out.
  // REQUIRES: the sizes fit.
  static MemoryEntry* Create(std::string_view key, std::uint32_t flags,
                             std::size_t value_size) noexcept {
    void* block = std::malloc(sizeof(MemoryEntry) + RoomFor(key.size(), value_size, flags));
    if (block == nullptr) return nullptr;
    return Build(block, key, flags, value_size);
  }
  // Makes the block of a freed entry (no reader can hold it) a new entry as
  // Create does, keeping its room. REQUIRES: room for RoomFor(...) bytes.
  static MemoryEntry* Recycle(MemoryEntry* freed, std::string_view key, std::uint32_t flags,
                              std::size_t value_size) noexcept {
    freed->~MemoryEntry();
    return Build(freed, key, flags, value_size);
  }
  static void Destroy(MemoryEntry* entry) noexcept {
    entry->~MemoryEntry();
    std::free(entry);
  }

  // What the entry costs the shard's budget: the allocator's whole chunk, its
  // header word included. Asks the allocator: callers ask once per entry and pass it on.
  std::size_t charge() const noexcept {
    return malloc_usable_size(const_cast<MemoryEntry*>(this)) + sizeof(std::size_t);
  }
  // The bytes after the header (RoomFor) a block of this charge has room for.
  static std::size_t CapacityOf(std::size_t charge) noexcept {
    return charge - sizeof(std::size_t) - sizeof(MemoryEntry);
  }

  // The CAS token. A lock-free reader must use ReadInto, which also checks it.
  std::uint64_t cas() const noexcept { return stamp.load(std::memory_order_relaxed) & kCasBits; }
  // REQUIRES: the entry is not published yet.
  void set_cas(std::uint64_t cas) noexcept {
    stamp.store((stamp.load(std::memory_order_relaxed) & ~kCasBits) | cas,
                std::memory_order_relaxed);
  }
  bool has_flags() const noexcept {
    return (stamp.load(std::memory_order_relaxed) & kHasFlags) != 0;
  }
  std::size_t key_size() const noexcept {
    return stamp.load(std::memory_order_relaxed) >> kKeySizeShift;
  }
  // REQUIRES: the entry is held (a lock-free reader uses ReadInto).
  std::uint32_t flags() const noexcept {
    if (!has_flags()) return 0;
    std::uint32_t flags;
    std::memcpy(&flags, value().data() + value_size, sizeof flags);
    return flags;
  }

  char* bytes() noexcept { return reinterpret_cast<char*>(this + 1); }
  const char* bytes() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  std::string_view key() const noexcept { return {bytes(), key_size()}; }
  std::string_view value() const noexcept { return {bytes() + key_size(), value_size}; }
  char* value_data() noexcept { return bytes() + key_size(); }

  // Whether WriteHeld can take a value of `value_size` bytes with `flags`: the
  // same size, flags stored or not as now, and small enough that a reader
  // caught by the write copies again at little cost.
  bool RewritableWith(std::size_t size, std::uint32_t flags) const noexcept {
    return size == value_size && (flags != 0) == has_flags() && size <= kLargestInPlace;
  }

  // The entry's own lock, for writers: a held entry's stamp has CAS 0, so
  // readers copy again (ReadInto). Whoever changes or unlinks a published entry
  // holds it first: a write in place without the shard's lock (MemoryShard::
  // OverwriteUnlocked) as well as every write under it, so the two never meet on
  // one entry. An unlinked entry stays held until it is freed, so no write
  // lands in it. TryHold takes it unless held; it returns the stamp as it was
  // (its CAS is the token), or 0 when the entry is held.
  std::uint64_t TryHold() noexcept {
    std::uint64_t before = stamp.load(std::memory_order_relaxed);
    if ((before & kCasBits) == 0 ||
        !stamp.compare_exchange_strong(before, before & ~kCasBits, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return 0;
    }
    std::atomic_thread_fence(std::memory_order_release);  // held before any byte changes
    return before;
  }
  // TryHold that waits for a write in place, which holds an entry only for a copy.
  // REQUIRES: the entry is published (an unlinked one stays held: see above).
  std::uint64_t Hold() noexcept {
    for (int spins = 0;; ++spins) {
      if (const std::uint64_t before = TryHold()) return before;
      if (spins >= kSpinsBeforeYield) {
        std::this_thread::yield();
      } else {
        CpuRelax();
      }
    }
  }
  // Lets the entry go unchanged: `held` is what Hold returned.
  void Release(std::uint64_t held) noexcept { stamp.store(held, std::memory_order_release); }
  // Rewrites the value, flags and expiry of a held entry and releases it with
  // the new CAS. REQUIRES: held; RewritableWith(value.size(), flags).
  void WriteHeld(std::string_view value, std::uint32_t flags, std::uint64_t cas,
                 std::uint32_t expiry_code) noexcept {
    if (!value.empty()) CopyBytes(value_data(), value.data(), value.size());
    if (flags != 0) CopyBytes(value_data() + value.size(), &flags, sizeof flags);
    expires.store(expiry_code, std::memory_order_relaxed);
    stamp.store((stamp.load(std::memory_order_relaxed) & ~kCasBits) | cas,
                std::memory_order_release);
  }
  // A held entry's value and flags, and `cas`, its token (what Hold returned).
  template <class Out>
  void ReadHeld(Out* out, std::uint64_t cas) const {
    out->value.assign(value().data(), value_size);
    out->flags = flags();
    out->cas = cas;
  }
  static std::uint64_t CasOf(std::uint64_t held) noexcept { return held & kCasBits; }
  // A lock-free reader's copy of the value, flags and CAS, and the expiry code
  // in `*expiry`, as one write left them: copies again while a write in place
  // runs or ran meanwhile (or while the entry is held). False after a few tries,
  // all overtaken by writes, or when the entry was unlinked: the caller then
  // reads under the shard's lock, holding the entry (ReadHeld).
  template <class Out>
  bool ReadInto(Out* out, std::uint32_t* expiry) const {
    for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
      const std::uint64_t before = stamp.load(std::memory_order_acquire);
      if ((before & kCasBits) == 0) {  // held: a write is under way, or unlinked
        for (int spin = 0; spin < kSpinsWhileHeld; ++spin) CpuRelax();
        continue;
      }
      AssignBytes(&out->value, value().data(), value_size);
      std::uint32_t flag_word = 0;
      if ((before & kHasFlags) != 0) {
        CopyBytes(&flag_word, value().data() + value_size, sizeof flag_word);
      }
      *expiry = expires.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);  // the copies end before the check
      if (stamp.load(std::memory_order_relaxed) == before) {
        out->flags = flag_word;
        out->cas = before & kCasBits;
        return true;
      }
    }
    return false;
  }

  // The expiry as steady-clock milliseconds; 0: never.
  std::int64_t expiry() const noexcept {
    const std::uint32_t code = expires.load(std::memory_order_relaxed);
    return code == ExpiryCode::kNever ? 0 : ExpiryCode::Decode(code);
  }
  bool has_expiry() const noexcept {
    return expires.load(std::memory_order_relaxed) != ExpiryCode::kNever;
  }
  void set_expiry(std::int64_t at_ms, bool round_down = false) noexcept {
    expires.store(ExpiryCode::Encode(at_ms, round_down), std::memory_order_relaxed);
  }
  bool ExpiredAt(std::int64_t now_ms) const noexcept {
    return CodeExpiredAt(expires.load(std::memory_order_relaxed), now_ms);
  }
  static bool CodeExpiredAt(std::uint32_t code, std::int64_t now_ms) noexcept {
    return code != ExpiryCode::kNever &&
           (code == ExpiryCode::kRemoved || now_ms >= ExpiryCode::Decode(code));
  }
  // Removed in place (MarkRemoved): still linked, but no longer an item.
  bool removed() const noexcept {
    return expires.load(std::memory_order_relaxed) == ExpiryCode::kRemoved;
  }
  // Removes a held entry in place and releases it with the new CAS, so a reader
  // that copied it before copies again and finds it removed.
  void MarkRemoved(std::uint64_t cas) noexcept {
    expires.store(ExpiryCode::kRemoved, std::memory_order_relaxed);
    stamp.store((stamp.load(std::memory_order_relaxed) & ~kCasBits) | cas,
                std::memory_order_release);
  }

 private:
  static MemoryEntry* Build(void* block, std::string_view key, std::uint32_t flags,
                            std::size_t value_size) noexcept {
    auto* entry = new (block) MemoryEntry;
    entry->stamp.store((std::uint64_t{key.size()} << kKeySizeShift) | (flags != 0 ? kHasFlags : 0),
                       std::memory_order_relaxed);
    entry->value_size = static_cast<std::uint32_t>(value_size);
    std::memcpy(entry->bytes(), key.data(), key.size());
    if (flags != 0) std::memcpy(entry->value_data() + value_size, &flags, sizeof flags);
    return entry;
  }

  static constexpr std::uint64_t kCasBits = kLargestCas;
  static constexpr std::uint64_t kHasFlags = std::uint64_t{1} << 47;
  static constexpr int kKeySizeShift = 48;
  // Values up to this size are rewritten in place (RewritableWith).
  static constexpr std::size_t kLargestInPlace = 4096;
  static constexpr int kReadAttempts = 4;
  static constexpr int kSpinsBeforeYield = 64;
  static constexpr int kSpinsWhileHeld = 16;  // a reader's wait per try: about a short copy

  // The value's bytes, which a write in place may change while a reader copies
  // them: the reader then throws its copy away (ReadInto). ThreadSanitizer is
  // told so by copying byte by byte with relaxed atomics, in its builds only.
  static void CopyBytes(void* to, const void* from, std::size_t size) noexcept {
#if defined(CACHET_MEMORY_TSAN)
    auto* out = static_cast<char*>(to);
    auto* in = static_cast<char*>(const_cast<void*>(from));
    for (std::size_t i = 0; i < size; ++i) {
      std::atomic_ref<char>(out[i]).store(std::atomic_ref<char>(in[i]).load(
                                              std::memory_order_relaxed),
                                          std::memory_order_relaxed);
    }
#else
    std::memcpy(to, from, size);
#endif
  }
  static void AssignBytes(std::string* to, const char* from, std::size_t size) {
#if defined(CACHET_MEMORY_TSAN)
    to->resize(size);
    CopyBytes(to->data(), from, size);
#else
    to->clear();  // then a plain append: the entry never lies inside the string
    to->append(from, size);
#endif
  }
};

static_assert(sizeof(MemoryEntry) == 16, "the entry header is 16 bytes");

// A count of entries removed in place (MemoryEntry::MarkRemoved), still linked
// but no longer items, and their key and value bytes; a difference may be negative.
struct RemovedEntries {
  std::int64_t items = 0;
  std::int64_t payload = 0;

  static RemovedEntries Of(const MemoryEntry& entry) noexcept {
    return {1, static_cast<std::int64_t>(entry.key_size() + entry.value_size)};
  }
  RemovedEntries operator-() const noexcept { return {-items, -payload}; }
  RemovedEntries& operator+=(const RemovedEntries& more) noexcept {
    items += more.items;
    payload += more.payload;
    return *this;
  }
};

}  // namespace cachet::memory
