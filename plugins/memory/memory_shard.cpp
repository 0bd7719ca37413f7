// MemoryShard: the operations of the memory store on one shard, under its lock.
#include "memory_shard.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "counter_text.h"

namespace cachet::memory {

namespace {

// The absolute expiry of an item written now with `ttl`; 0 when it never expires.
// An expiry past the clock's range is none: the item outlives the process anyway.
// REQUIRES: ttl is not negative (MemoryBackend refuses it).
std::int64_t ExpiryFor(Ttl ttl) {
  if (ttl.count() == 0) return 0;
  const std::int64_t now = SteadyNowMs();
  return ttl.count() > std::numeric_limits<std::int64_t>::max() - now ? 0 : now + ttl.count();
}

// Reading the clock costs more than the lookup, so only entries with a TTL pay it.
bool ExpiredNow(const MemoryEntry& entry) {
  return entry.has_expiry() && entry.ExpiredAt(SteadyNowMs());
}

Status OutOfMemory() { return Status::Internal("memory: out of memory"); }

// What an entry removed in place holds beyond its key and value, about: its
// header and the allocator's word and rounding (for the sweep's threshold).
constexpr std::int64_t kRemovedEntryOverhead = 32;

// The keys a shard's sketch tells apart: about two or three times the items its
// budget holds (an item costs well over 64 bytes), so keys that were asked for
// but are not cached are counted too; bounded to 1 MiB of counters per row.
std::size_t SketchKeys(std::size_t capacity_bytes) {
  constexpr std::size_t kMostKeys = std::size_t{1} << 20;
  const std::size_t keys = capacity_bytes / 64;
  return keys < kMostKeys ? keys : kMostKeys;
}

// The admission window's bytes: its percent of the shard's share, at least 1
// (then it holds just the newest item); 0 when there is no window.
std::size_t WindowBytes(const ShardLimits& limits) {
  if (limits.policy != EvictionPolicy::kTinyLfu || limits.window_percent == 0) return 0;
  return std::max<std::size_t>(1, limits.share_bytes / 100 * limits.window_percent);
}

}  // namespace

MemoryShard::MemoryShard(ShardLimits limits, ReadEpochs& epochs, ByteBudget& budget,
                         WriterLanes& lanes, std::size_t index)
    : epochs_(epochs),
      lanes_(lanes),
      budget_(budget),
      // Small at first: it grows with the items (StoreNew), up to what the share holds.
      sketch_(limits.policy == EvictionPolicy::kTinyLfu
                  ? std::make_unique<FrequencySketch>(
                        std::min<std::size_t>(1024, SketchKeys(limits.share_bytes)),
                        SketchKeys(limits.share_bytes))
                  : nullptr),
      limits_(limits),
      index_(index),
      chunk_(std::clamp<std::size_t>(limits.share_bytes / 64, 1, kChunk)),
      window_(WindowBytes(limits)) {}

std::int64_t SteadyNowMs() noexcept {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status MemoryShard::Get(const KeyRef& key, Item* out) {
  {
    ReadEpochs::Section section(epochs_);
    // Hit or miss, the key was wanted; inside the section, as the sketch may grow.
    if (sketch_ != nullptr) sketch_->Record(key.hash);
    // A second look when the first entry was unlinked or kept busy by writes:
    // its slot may hold the entry that replaced it.
    for (int look = 0; look < 2; ++look) {
      EntryTable::Slot* slot = nullptr;
      MemoryEntry* entry = table_.Find(key.key, key.hash, &slot);
      if (entry == nullptr) {
        out->value.clear();  // a first look's copy that did not hold
        section.CountMiss();
        return Status::NotFound();
      }
      // The expiry is judged as copied with the value: a write in place changes both.
      std::uint32_t expiry = ExpiryCode::kNever;
      if (!entry->ReadInto(out, &expiry)) continue;
      // Reading the clock costs more than the lookup: only items with a TTL pay it.
      if (expiry == ExpiryCode::kNever || !MemoryEntry::CodeExpiredAt(expiry, SteadyNowMs())) {
        EntryTable::MarkReferenced(slot);
        section.CountHit();
        return Status::OK();
      }
      if (expiry == ExpiryCode::kRemoved) {  // left for a set to take back in place
        out->value.clear();
        section.CountMiss();
        return Status::NotFound();
      }
      break;  // expired: removed under the lock
    }
  }
  // An expired entry to remove, or a value rewritten under every try: under the
  // lock. Nothing of a copy that did not hold stays behind in a miss.
  out->value.clear();
  return GetLocked(key, out);
}

Status MemoryShard::GetLocked(const KeyRef& key, Item* out) {
  Writing writing(*this);
  const Found found = FindForRead(key);
  if (found.entry == nullptr) return Status::NotFound();
  found.entry->ReadHeld(out, found.cas());
  return Status::OK();
}

Status MemoryShard::GetAndTouch(const KeyRef& key, Ttl ttl, Item* out) {
  Writing writing(*this);
  if (sketch_ != nullptr) sketch_->Record(key.hash);
  const Found found = FindForRead(key);
  if (found.entry == nullptr) return Status::NotFound();
  found.entry->set_expiry(ExpiryFor(ttl), limits_.expiry_rounds_down);
  found.entry->ReadHeld(out, found.cas());
  return Status::OK();
}

Status MemoryShard::Store(StoreMode mode, const KeyRef& key, const ItemView& item, Ttl ttl) {
  if (item.value.size() > limits_.max_item_size) {
    return RefuseLargeValue(mode, key, item.value.size());  // before the sketch counts it
  }
  if (Status answer; OverwriteUnlocked(mode, key, item, ttl, &answer)) return answer;
  Writing writing(*this);
  if (sketch_ != nullptr) {
    sketch_->AgeIfDue();
    sketch_->Record(key.hash);  // a write is an access too: a write-only cache still admits
  }
  Found found = FindLive(key);
  switch (mode) {
    case StoreMode::kSet:
      break;
    case StoreMode::kAdd:
      if (found.entry != nullptr) return Status::NotStored();
      break;
    case StoreMode::kReplace:
      if (found.entry == nullptr) return Status::NotStored();
      break;
    case StoreMode::kAppend:
    case StoreMode::kPrepend:
      if (found.entry == nullptr) return Status::NotStored();
      return Concatenate(found, item.value, mode == StoreMode::kAppend);
    case StoreMode::kCas:
      if (found.entry == nullptr) return Status::NotFound();
      if (found.cas() != item.cas) return Status::Exists();
      break;
  }
  if (found.entry == nullptr) return StoreNew(key, item, ttl, /*judged=*/mode != StoreMode::kAdd);
  if (Status s = CheckFits(found.entry->key_size(), item.value.size(), item.flags); !s.ok()) {
    return RefuseSet(mode, found, std::move(s));
  }
  if (RewriteInPlace(found, item.value, item.flags, ExpiryFor(ttl))) return Status::OK();
  MemoryEntry* entry = Rewrite(found, item.value, {}, item.flags, ExpiryFor(ttl));
  if (entry == nullptr) return OutOfMemory();
  EvictOver(entry);
  return Status::OK();
}

bool MemoryShard::HoldUnlocked(MemoryEntry* entry, bool revive, std::uint64_t* held,
                               std::uint64_t* token) {
  *token = lanes_.Mine().NextCas();  // the thread's own lane: no lock (MayWriteUnlocked)
  *held = entry->TryHold();
  if (*held == 0) return false;  // another write holds it, or it was unlinked
  if (!(revive && entry->removed()) && ExpiredNow(*entry)) {
    entry->Release(*held);
    return false;
  }
  return true;
}

bool MemoryShard::OverwriteUnlocked(StoreMode mode, const KeyRef& key, const ItemView& item,
                                    Ttl ttl, Status* answer) {
  if (!MayWriteUnlocked() || (mode != StoreMode::kSet && mode != StoreMode::kReplace &&
                              mode != StoreMode::kCas)) {
    return false;
  }
  ReadEpochs::Section section(epochs_);
  EntryTable::Slot* slot = nullptr;
  MemoryEntry* entry = table_.Find(key.key, key.hash, &slot);
  if (entry == nullptr || !entry->RewritableWith(item.value.size(), item.flags)) return false;
  std::uint64_t held = 0;
  std::uint64_t token = 0;
  if (!HoldUnlocked(entry, /*revive=*/mode == StoreMode::kSet, &held, &token)) return false;
  const bool revived = entry->removed();  // held: no one else changes it now
  if (mode == StoreMode::kCas && MemoryEntry::CasOf(held) != item.cas) {
    entry->Release(held);
    *answer = Status::Exists();
    return true;
  }
  entry->WriteHeld(item.value, item.flags, token,
                   ExpiryCode::Encode(ExpiryFor(ttl), limits_.expiry_rounds_down));
  EntryTable::MarkReferenced(slot);
  if (revived) lanes_.Mine().CountRemoved(-RemovedEntries::Of(*entry));
  *answer = Status::OK();
  return true;
}

bool MemoryShard::RemoveUnlocked(const KeyRef& key, Status* answer) {
  if (!MayWriteUnlocked()) return false;
  ReadEpochs::Section section(epochs_);
  EntryTable::Slot* slot = nullptr;
  MemoryEntry* entry = table_.Find(key.key, key.hash, &slot);
  if (entry == nullptr) {
    *answer = Status::NotFound();  // a miss at one instant of the lookup
    return true;
  }
  std::uint64_t held = 0;
  std::uint64_t token = 0;
  if (!HoldUnlocked(entry, /*revive=*/false, &held, &token)) return false;
  entry->MarkRemoved(token);
  lanes_.Mine().CountRemoved(RemovedEntries::Of(*entry));
  // The entry keeps its bytes until the CLOCK or a write short of room unlinks it.
  budget_.NoteRemoved(index_);
  *answer = Status::OK();
  return true;
}

bool MemoryShard::StepCounterUnlocked(const KeyRef& key, std::uint64_t delta, bool increment,
                                      std::uint64_t* value, Status* answer) {
  if (!MayWriteUnlocked()) return false;
  ReadEpochs::Section section(epochs_);
  EntryTable::Slot* slot = nullptr;
  MemoryEntry* entry = table_.Find(key.key, key.hash, &slot);
  if (entry == nullptr || entry->value_size > kCounterDigits) return false;
  std::uint64_t held = 0;
  std::uint64_t token = 0;
  if (!HoldUnlocked(entry, /*revive=*/false, &held, &token)) return false;
  std::uint64_t current = 0;
  std::uint64_t next = 0;
  char digits[kCounterDigits];
  std::string_view text;
  if (ParseCounter(entry->value(), &current)) {
    next = ApplyDelta(current, delta, increment);
    text = FormatCounter(next, digits);
  }
  // Not a number, or a count that gains or loses digits: the locked way answers.
  if (text.empty() || !entry->RewritableWith(text.size(), entry->flags())) {
    entry->Release(held);
    return false;
  }
  entry->WriteHeld(text, entry->flags(), token, entry->expires.load(std::memory_order_relaxed));
  EntryTable::MarkReferenced(slot);
  *value = next;
  *answer = Status::OK();
  return true;
}

Status MemoryShard::RefuseLargeValue(StoreMode mode, const KeyRef& key, std::size_t size) {
  Status why = Status::TooLarge("memory: value of " + std::to_string(size) +
                                " bytes is over max_item_size " +
                                std::to_string(limits_.max_item_size));
  if (mode != StoreMode::kSet) return why;
  Writing writing(*this);
  Found found = FindLive(key);
  return RefuseSet(mode, found, std::move(why));
}

Status MemoryShard::RefuseSet(StoreMode mode, Found& found, Status why) {
  if (mode == StoreMode::kSet && found.entry != nullptr) {
    Erase(found);
    ReturnSurplus();
  }
  return why;
}

Status MemoryShard::Remove(const KeyRef& key) {
  if (Status answer; RemoveUnlocked(key, &answer)) return answer;
  Writing writing(*this);
  Found found = FindLive(key);
  if (found.entry == nullptr) return Status::NotFound();
  Erase(found);
  ReturnSurplus();
  return Status::OK();
}

Status MemoryShard::Touch(const KeyRef& key, Ttl ttl) {
  Writing writing(*this);
  const Found found = FindLive(key);
  if (found.entry == nullptr) return Status::NotFound();
  found.entry->set_expiry(ExpiryFor(ttl), limits_.expiry_rounds_down);
  table_.MarkAt(found.index);
  return Status::OK();
}

Status MemoryShard::AddToCounter(const KeyRef& key, std::uint64_t delta, bool increment,
                                 std::uint64_t* value) {
  if (Status answer; StepCounterUnlocked(key, delta, increment, value, &answer)) return answer;
  Writing writing(*this);
  Found found = FindLive(key);
  if (found.entry == nullptr) return Status::NotFound();
  std::uint64_t current = 0;
  if (!ParseCounter(found.entry->value(), &current)) {
    return Status::InvalidArgument(
        "memory: cannot increment or decrement a value that is not an unsigned decimal number");
  }
  const std::uint64_t next = ApplyDelta(current, delta, increment);
  char digits[kCounterDigits];
  const std::string_view text = FormatCounter(next, digits);
  // A counter that gains digits grows like an append, within the same limits.
  if (text.size() > limits_.max_item_size) {
    return Status::TooLarge("memory: the counter would grow to " + std::to_string(text.size()) +
                            " bytes, over max_item_size " + std::to_string(limits_.max_item_size));
  }
  const std::uint32_t flags = found.entry->flags();
  if (Status s = CheckFits(found.entry->key_size(), text.size(), flags); !s.ok()) return s;
  if (!RewriteInPlace(found, text, flags, found.entry->expiry())) {
    MemoryEntry* entry = Rewrite(found, text, {}, flags, found.entry->expiry());
    if (entry == nullptr) return OutOfMemory();
    EvictOver(entry);
  }
  *value = next;
  return Status::OK();
}

void MemoryShard::Flush() {
  Writing writing(*this);
  lane_->CountRemoved(-table_.RetireAll(*limbo_));
  // What readers allow is freed now, under this shard's lock only; the store's
  // flush then reaches every lane with all writes stopped, for what remains.
  limbo_->Reclaim(/*keep_spares=*/true);
  window_.Clear();
  bytes_ = 0;
  payload_bytes_ = 0;
  ReturnSurplus();
}

ShardStats MemoryShard::stats() const {
  ShardStats out = counters_;  // reclaiming_bytes is the store's (WriterLanes)
  out.total_items = total_items_;
  out.items = table_.size();
  out.bytes = bytes_;
  out.table_bytes = table_.bytes();
  out.payload_bytes = payload_bytes_;
  out.sketch_bytes = sketch_ != nullptr ? sketch_->bytes() : 0;
  out.window_bytes = window_.bytes();
  out.window_items = window_.items();
  return out;
}

template <class Work>
std::optional<std::size_t> MemoryShard::GiveBackIfFree(WriterLanes::Held& lane,
                                                       Work work) noexcept {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  limbo_ = &lane.limbo();
  lane_ = &lane;
  work();
  limbo_ = nullptr;
  lane_ = nullptr;
  const std::size_t unused = credit_ > used() ? credit_ - used() : 0;
  credit_ -= unused;
  budget_.Return(unused);
  return unused;
}

std::size_t MemoryShard::TryGiveBack(std::size_t bytes, WriterLanes::Held& lane) noexcept {
  return GiveBackIfFree(lane, [&] { EvictFor(bytes, nullptr); }).value_or(0);
}

bool MemoryShard::TryGiveBackRemoved(WriterLanes::Held& lane) noexcept {
  return GiveBackIfFree(lane, [&] { SweepRemoved(); }).has_value();
}

void MemoryShard::SweepRemoved() {
  // Taken first: a removal meanwhile notes itself again for the next sweep.
  if (!budget_.TakeRemovedNote(index_)) return;
  for (std::size_t index = 0; index < table_.slot_count(); ++index) {
    MemoryEntry* entry = table_.EntryAt(index);
    if (entry == nullptr || !entry->removed()) continue;
    const std::uint64_t held = entry->Hold();
    if (entry->removed()) {
      Erase(index);
    } else {
      entry->Release(held);  // set again meanwhile
    }
  }
}

MemoryShard::Found MemoryShard::FindLive(const KeyRef& key) {
  const std::size_t index = table_.IndexOf(key.key, key.hash);
  if (index == EntryTable::kNone) return {};
  MemoryEntry* entry = table_.At(index);
  // Held before its expiry is judged: a write in place may be refreshing it.
  const std::uint64_t held = entry->Hold();
  if (ExpiredNow(*entry)) {
    if (!entry->removed()) ++counters_.expired;
    Erase(index);
    ReturnSurplus();
    return {};
  }
  return Found(entry, index, key.hash, held);
}

MemoryShard::Found MemoryShard::FindForRead(const KeyRef& key) {
  Found found = FindLive(key);
  if (found.entry == nullptr) {
    epochs_.CountMiss();
    return found;
  }
  epochs_.CountHit();
  table_.MarkAt(found.index);
  return found;
}

Status MemoryShard::StoreNew(const KeyRef& key, const ItemView& item, Ttl ttl, bool judged) {
  if (Status s = CheckFits(key.key.size(), item.value.size(), item.flags); !s.ok()) return s;
  // Without a window, judged before anything is built or published: a refused
  // item is never seen by a reader, evicts nothing and takes no CAS token. With
  // one, the item is judged when it leaves the window (PickVictim).
  if (judged && !windowed() &&
      !Admit(key.hash, ChargeFor(key.key.size(), item.value.size(), item.flags))) {
    ++counters_.rejected;
    return Status::NotStored();
  }
  std::size_t charge = 0;
  MemoryEntry* entry = NewEntry(key.key, item.flags, item.value.size(), &charge);
  if (entry == nullptr) return OutOfMemory();
  if (!item.value.empty()) {
    std::memcpy(entry->value_data(), item.value.data(), item.value.size());
  }
  entry->set_cas(NextCas());
  entry->set_expiry(ExpiryFor(ttl), limits_.expiry_rounds_down);
  // Every new item enters the window, unless its record finds no memory.
  const bool in_window = windowed() && window_.Enter({key.hash, entry->cas()}, charge);
  if (!table_.Insert(entry, key.hash, *limbo_, in_window)) {
    if (in_window) window_.Left(charge);  // its record goes stale
    MemoryEntry::Destroy(entry);          // never published
    return OutOfMemory();
  }
  bytes_ += charge;
  payload_bytes_ += entry->key_size() + entry->value_size;
  ++total_items_;
  // The sketch tells apart about four times the keys the shard holds.
  if (sketch_ != nullptr) {
    const std::size_t old_bytes = sketch_->bytes();
    if (RetiredArray* old = sketch_->Grow(4 * table_.size())) limbo_->Retire(old, old_bytes);
  }
  EvictOver(entry);
  if (windowed()) {
    // With room to spare, what the window holds beyond its limit joins the main
    // space unjudged (when the shard was full, EvictOver judged it already).
    std::uint64_t hash = 0;
    while (window_.over() && LeaveWindow(entry, &hash) != EntryTable::kNone) {
    }
    if (window_.stale()) CompactWindow();
  }
  return Status::OK();
}

bool MemoryShard::Admit(std::uint64_t hash, std::size_t charge) {
  if (sketch_ == nullptr || used() + charge <= credit_ + budget_.left()) return true;
  const std::int64_t now_ms = SteadyNowMs();
  // The clock's walk up to its first victim: marked entries get their second
  // chance here, as EvictOver would give it.
  const std::size_t index = table_.NextVictim(nullptr, now_ms);
  if (index == EntryTable::kNone) return true;
  const MemoryEntry* victim = table_.At(index);
  if (victim->ExpiredAt(now_ms)) return true;  // room that costs no one anything
  // TinyLFU: the newcomer displaces the victim only if it was asked for more
  // often; on a tie the resident stays (a scan's keys, seen once, never push
  // out the working set).
  return sketch_->Estimate(hash) > sketch_->Estimate(EntryTable::HashOf(victim));
}

std::size_t MemoryShard::PickVictim(const MemoryEntry* keep, std::int64_t now_ms) {
  if (window_.over()) {
    std::uint64_t hash = 0;
    const std::size_t candidate = LeaveWindow(keep, &hash);
    if (candidate != EntryTable::kNone) {
      // The candidate is in the main space now; one of the two goes.
      const std::size_t victim = table_.NextVictim(keep, now_ms);
      if (victim == EntryTable::kNone || victim == candidate ||
          table_.At(candidate)->ExpiredAt(now_ms)) {
        return candidate;
      }
      const MemoryEntry* resident = table_.At(victim);
      if (resident->ExpiredAt(now_ms)) return victim;  // room that costs no one anything
      // As without a window: the newcomer displaces the victim only if it was
      // asked for more often; on a tie the resident stays.
      if (sketch_->Estimate(hash) > sketch_->Estimate(EntryTable::HashOf(resident))) return victim;
      ++counters_.rejected;
      return candidate;
    }
  }
  const std::size_t victim = table_.NextVictim(keep, now_ms);
  if (victim != EntryTable::kNone || !windowed()) return victim;
  // Only window entries are left: the oldest goes.
  std::uint64_t hash = 0;
  return LeaveWindow(keep, &hash);
}

std::size_t MemoryShard::LeaveWindow(const MemoryEntry* keep, std::uint64_t* hash) {
  // Each turn drops a record, or moves `keep`'s to the back once: bounded.
  bool kept_once = false;
  while (window_.records() > 0) {
    const AdmissionWindow::Record record = window_.oldest();
    window_.Pop();
    const std::size_t index = table_.FindInWindow(record.hash, record.cas);
    if (index == EntryTable::kNone) continue;  // stale: the entry left the window another way
    if (table_.At(index) == keep) {
      // The newest entry stays in the window; its record was just popped, so
      // it has room to go back.
      (void)window_.Push(record);
      if (kept_once) return EntryTable::kNone;
      kept_once = true;
      continue;
    }
    table_.LeaveWindow(index);
    window_.Left(table_.At(index)->charge());
    *hash = record.hash;
    return index;
  }
  return EntryTable::kNone;
}

void MemoryShard::CompactWindow() {
  // Pops each record once and puts back those that still name a window entry;
  // a record just popped always has room to go back.
  for (std::size_t n = window_.records(); n > 0; --n) {
    const AdmissionWindow::Record record = window_.oldest();
    window_.Pop();
    if (table_.FindInWindow(record.hash, record.cas) != EntryTable::kNone) {
      (void)window_.Push(record);
    }
  }
}

MemoryEntry* MemoryShard::NewEntry(std::string_view key, std::uint32_t flags,
                                   std::size_t value_size, std::size_t* charge) {
  if (MemoryEntry* spare = limbo_->TakeSpare(MemoryEntry::RoomFor(key.size(), value_size, flags),
                                             charge)) {
    return MemoryEntry::Recycle(spare, key, flags, value_size);
  }
  MemoryEntry* entry = MemoryEntry::Create(key, flags, value_size);
  if (entry != nullptr) *charge = entry->charge();  // a block just written: a cache hit
  return entry;
}

Status MemoryShard::Concatenate(Found& found, std::string_view bytes, bool after) {
  MemoryEntry* entry = found.entry;
  const std::size_t new_size = entry->value_size + bytes.size();
  if (new_size > limits_.max_item_size) {
    return Status::TooLarge("memory: value would grow to " + std::to_string(new_size) +
                            " bytes, over max_item_size " + std::to_string(limits_.max_item_size));
  }
  if (Status s = CheckFits(entry->key_size(), new_size, entry->flags()); !s.ok()) return s;
  const std::string_view old = entry->value();
  entry = after ? Rewrite(found, old, bytes, entry->flags(), entry->expiry())
                : Rewrite(found, bytes, old, entry->flags(), entry->expiry());
  if (entry == nullptr) return OutOfMemory();
  EvictOver(entry);
  return Status::OK();
}

bool MemoryShard::RewriteInPlace(Found& found, std::string_view value, std::uint32_t flags,
                                 std::int64_t expires_at_ms) {
  // The admission window names its entries by their CAS: a rewrite there pushes a record.
  if (windowed() || !found.entry->RewritableWith(value.size(), flags)) return false;
  found.entry->WriteHeld(value, flags, NextCas(),
                         ExpiryCode::Encode(expires_at_ms, limits_.expiry_rounds_down));
  table_.MarkAt(found.index);
  found.Consumed();
  return true;
}

MemoryEntry* MemoryShard::Rewrite(Found& found, std::string_view first, std::string_view second,
                                  std::uint32_t flags, std::int64_t expires_at_ms) {
  MemoryEntry* entry = found.entry;
  const std::size_t size = first.size() + second.size();
  std::size_t new_charge = 0;
  MemoryEntry* fresh = NewEntry(entry->key(), flags, size, &new_charge);
  if (fresh == nullptr) return nullptr;
  // memcpy must not see the null data() of an empty view, even for 0 bytes.
  if (!first.empty()) std::memcpy(fresh->value_data(), first.data(), first.size());
  if (!second.empty()) {
    std::memcpy(fresh->value_data() + first.size(), second.data(), second.size());
  }
  fresh->set_cas(NextCas());
  fresh->set_expiry(expires_at_ms, limits_.expiry_rounds_down);
  table_.Replace(found.index, fresh);
  const std::size_t old_charge = entry->charge();  // IndexOf fetched its header's line
  if (windowed()) {
    if (table_.InWindow(found.index) &&
        !window_.Rewritten({found.hash, fresh->cas()}, old_charge, new_charge)) {
      // No memory for its new record: it joins the main space.
      table_.LeaveWindow(found.index);
      window_.Left(old_charge);
    }
    if (window_.stale()) CompactWindow();  // rewrites of window entries leave stale records
  }
  bytes_ = bytes_ - old_charge + new_charge;
  payload_bytes_ = payload_bytes_ - (entry->key_size() + entry->value_size) + fresh->key_size() + size;
  limbo_->Retire(entry, old_charge);
  found.Consumed();  // unlinked: it stays held
  return fresh;
}

Status MemoryShard::CheckFits(std::size_t key_size, std::size_t value_size,
                              std::uint32_t flags) const {
  const std::size_t charge = ChargeFor(key_size, value_size, flags);
  if (charge + table_.bytes() <= budget_.total()) return Status::OK();
  return Status::TooLarge("memory: an item of " + std::to_string(charge) +
                          " bytes exceeds max_bytes of " + std::to_string(budget_.total()) +
                          " (with its shard's table)");
}

void MemoryShard::Erase(std::size_t index) {
  const bool in_window = table_.InWindow(index);
  MemoryEntry* entry = table_.Remove(index);  // held: unlinked, it stays so
  const std::size_t charge = entry->charge();
  if (in_window) window_.Left(charge);  // its record goes stale
  if (entry->removed()) lane_->CountRemoved(-RemovedEntries::Of(*entry));
  bytes_ -= charge;
  payload_bytes_ -= entry->key_size() + entry->value_size;
  limbo_->Retire(entry, charge);
}

void MemoryShard::CoverUsage(const MemoryEntry* keep) {
  // What is missing, and a chunk more so the next writes need not borrow.
  credit_ += budget_.Borrow(used() - credit_ + chunk_);
  if (used() <= credit_) return;
  // Entries removed in place hold bytes no one reads. Once they add up to a
  // sixteenth of the budget, every shard unlinks them before any item is
  // evicted; below that, each shard's CLOCK takes them first as it meets them.
  const auto removed_bytes = [this] {
    const RemovedEntries removed = lanes_.removed();
    return removed.payload + kRemovedEntryOverhead * removed.items;
  };
  if (budget_.MayHoldRemoved() &&
      removed_bytes() >= static_cast<std::int64_t>(budget_.total() / 16)) {
    SweepRemoved();
    budget_.ReclaimRemoved(this, *lane_);
    credit_ += budget_.Borrow(used() > credit_ ? used() - credit_ : 0);
    if (used() <= credit_) return;
  }
  EvictFor(0, keep);
  if (used() <= credit_) return;
  // This shard has too little to evict (a large item in a small shard).
  budget_.Reclaim(this, used() - credit_, *lane_);
  credit_ += budget_.Borrow(used() - credit_);
  // Should every other shard have been busy, this one stays over by what it
  // just wrote until its next write covers it again.
}

void MemoryShard::EvictFor(std::size_t room, const MemoryEntry* keep) {
  if (used() + room <= credit_) return;
  const std::int64_t now_ms = SteadyNowMs();
  while (used() + room > credit_) {
    const std::size_t index = PickVictim(keep, now_ms);
    if (index == EntryTable::kNone) return;
    MemoryEntry* victim = table_.At(index);
    (void)victim->Hold();  // before it is judged: a write in place may change it
    if (!victim->removed()) ++(victim->ExpiredAt(now_ms) ? counters_.expired : counters_.evictions);
    Erase(index);
  }
}

}  // namespace cachet::memory
