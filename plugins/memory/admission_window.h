// AdmissionWindow: the bookkeeping of W-TinyLFU's window in one memory shard.
//
// Under `policy = tinylfu` with a window, every new item enters the window, a
// small part of the shard's budget (window_percent of its share). The window's
// items leave it oldest first (first in, first out); one that leaves while the
// shard is full competes with the main space's CLOCK victim through the
// frequency sketch, and the one asked for less often goes. So a key that is new
// but asked for at once (a burst) has its stay in the window to earn the counts
// that let it in, which TinyLFU without a window, judging the item as it
// arrives, never gives it.
//
// The window's items are ordinary entries of the shard's table whose slot
// carries the window mark (EntryTable); this class keeps their order, a ring of
// (hash, CAS) records, and their count and bytes. A record names its entry by
// the key's hash and the entry's CAS token, which is unique within the shard, so
// an entry that was overwritten, removed or expired leaves a stale record that
// matches nothing; the shard skips those, and compacts the ring when they
// outnumber the live ones. Not synchronized: the shard's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace cachet::memory {

class AdmissionWindow {
 public:
  struct Record {
    std::uint64_t hash;  // the key's hash
    std::uint64_t cas;   // the entry's CAS token when it entered (or was rewritten)
  };

  // A window of `limit_bytes` (0: no window).
  explicit AdmissionWindow(std::size_t limit_bytes) noexcept : limit_(limit_bytes) {}
  ~AdmissionWindow() { delete[] records_; }
  AdmissionWindow(const AdmissionWindow&) = delete;
  AdmissionWindow& operator=(const AdmissionWindow&) = delete;

  bool enabled() const noexcept { return limit_ > 0; }
  // More bytes than its limit, and more than the one newest item (which may be
  // larger than the whole window).
  bool over() const noexcept { return items_ > 1 && bytes_ > limit_; }
  // Stale records beyond the live ones worth a compaction (Records()).
  bool stale() const noexcept { return count_ > 2 * items_ + 64; }

  // An entry of `charge` bytes entered; false, and nothing changed, when there is
  // no memory for its record (the caller then puts it in the main space).
  bool Enter(Record record, std::size_t charge) noexcept {
    if (!Push(record)) return false;
    bytes_ += charge;
    ++items_;
    return true;
  }
  // A window entry was rewritten: its new CAS and charge. Its old record goes
  // stale and the new one is the newest (a write counts as a use). false when
  // there is no memory for the record: the caller then takes it out of the
  // window (Left) with its old charge.
  bool Rewritten(Record record, std::size_t old_charge, std::size_t new_charge) noexcept {
    if (!Push(record)) return false;
    bytes_ = bytes_ - old_charge + new_charge;
    return true;
  }
  // A window entry of `charge` bytes left it (joined the main space, or was
  // removed); its record, if any is left, goes stale.
  void Left(std::size_t charge) noexcept {
    bytes_ -= charge;
    --items_;
  }
  // The oldest record, which the caller then removes with Pop (or keeps with
  // Pop and Push). REQUIRES: records() > 0.
  Record oldest() const noexcept { return records_[head_]; }
  void Pop() noexcept {
    head_ = (head_ + 1) & mask_;
    --count_;
  }
  // Appends a record; false when the ring is full and cannot grow.
  bool Push(Record record) noexcept;
  // Forgets every item and record (a flush).
  void Clear() noexcept {
    head_ = 0;
    count_ = 0;
    bytes_ = 0;
    items_ = 0;
  }

  std::size_t records() const noexcept { return count_; }
  std::size_t items() const noexcept { return items_; }
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t limit() const noexcept { return limit_; }

 private:
  const std::size_t limit_;
  Record* records_ = nullptr;
  std::size_t mask_ = ~std::size_t{0};  // capacity - 1; no capacity yet
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;  // the window entries' charge
  std::size_t items_ = 0;  // the window's entries
};

inline bool AdmissionWindow::Push(Record record) noexcept {
  if (count_ == mask_ + 1) {
    // Full (or never given room): twice the room, the records in order.
    const std::size_t capacity = count_ == 0 ? 64 : 2 * count_;
    auto* grown = new (std::nothrow) Record[capacity];
    if (grown == nullptr) return false;
    for (std::size_t i = 0; i < count_; ++i) grown[i] = records_[(head_ + i) & mask_];
    delete[] records_;
    records_ = grown;
    mask_ = capacity - 1;
    head_ = 0;
  }
  records_[(head_ + count_) & mask_] = record;
  ++count_;
  return true;
}

}  // namespace cachet::memory
