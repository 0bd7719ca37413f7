// EntryTable: insertion, removal and growth of the chained hash table.
#include "entry_table.h"

#include <new>

namespace cachet::memory {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

EntryTable::BucketArray* EntryTable::BucketArray::Create(std::size_t count) noexcept {
  auto* buckets = new (std::nothrow) BucketArray;
  if (buckets == nullptr) return nullptr;
  // Value-initialized: every head starts as nullptr.
  buckets->heads.reset(new (std::nothrow) std::atomic<MemoryEntry*>[count]());
  if (buckets->heads == nullptr) {
    delete buckets;
    return nullptr;
  }
  buckets->mask = count - 1;
  return buckets;
}

EntryTable::EntryTable(Limbo& limbo) : limbo_(limbo) {
  BucketArray* buckets = BucketArray::Create(kInitialBuckets);
  if (buckets == nullptr) throw std::bad_alloc();
  buckets_.store(buckets);
}

EntryTable::~EntryTable() {
  // No reader is left when the table goes, so the entries are freed at once.
  BucketArray* buckets = buckets_.load();
  for (std::size_t i = 0; i <= buckets->mask; ++i) {
    MemoryEntry* e = buckets->heads[i].load(kRelaxed);
    while (e != nullptr) {
      MemoryEntry* next = e->chain_next.load(kRelaxed);
      MemoryEntry::Destroy(e);
      e = next;
    }
  }
  delete buckets;
}

void EntryTable::Insert(MemoryEntry* entry) noexcept {
  GrowIfFull();
  std::atomic<MemoryEntry*>& head = HeadOf(entry);
  entry->chain_next.store(head.load(kRelaxed), kRelaxed);
  head.store(entry);  // publishes the entry, fully built, to readers
  ++size_;
}

std::atomic<MemoryEntry*>* EntryTable::LinkTo(const MemoryEntry* entry) noexcept {
  std::atomic<MemoryEntry*>* link = &HeadOf(entry);
  for (MemoryEntry* e = link->load(kRelaxed); e != nullptr; e = link->load(kRelaxed)) {
    if (e == entry) return link;
    link = &e->chain_next;
  }
  return nullptr;
}

void EntryTable::Detach(MemoryEntry* entry) noexcept {
  std::atomic<MemoryEntry*>* link = LinkTo(entry);
  if (link == nullptr) return;
  // The entry keeps its own link: a reader standing on it still reaches the rest.
  link->store(entry->chain_next.load(kRelaxed));
  --size_;
}

void EntryTable::Replace(MemoryEntry* entry, MemoryEntry* replacement) noexcept {
  std::atomic<MemoryEntry*>* link = LinkTo(entry);
  if (link == nullptr) return;
  replacement->chain_next.store(entry->chain_next.load(kRelaxed), kRelaxed);
  link->store(replacement);  // publishes the replacement, fully built, to readers
}

void EntryTable::RetireAll() noexcept {
  BucketArray* buckets = buckets_.load(kRelaxed);
  for (std::size_t i = 0; i <= buckets->mask; ++i) {
    MemoryEntry* e = buckets->heads[i].exchange(nullptr);
    while (e != nullptr) {
      MemoryEntry* next = e->chain_next.load(kRelaxed);
      limbo_.Retire(e);
      e = next;
    }
  }
  size_ = 0;
}

void EntryTable::GrowIfFull() noexcept {
  BucketArray* old = buckets_.load(kRelaxed);
  if (size_ <= old->mask) return;
  BucketArray* bigger = BucketArray::Create((old->mask + 1) * 2);
  if (bigger == nullptr) return;
  // Moving entries rewrites their links, so a reader walking a chain meanwhile
  // may miss an entry; the odd generation tells it not to trust a miss.
  layout_.fetch_add(1);
  for (std::size_t i = 0; i <= old->mask; ++i) {
    MemoryEntry* e = old->heads[i].load(kRelaxed);
    while (e != nullptr) {
      MemoryEntry* next = e->chain_next.load(kRelaxed);
      std::atomic<MemoryEntry*>& head = bigger->heads[e->hash & bigger->mask];
      e->chain_next.store(head.load(kRelaxed));
      head.store(e, kRelaxed);
      e = next;
    }
  }
  buckets_.store(bigger);
  layout_.fetch_add(1);
  limbo_.Retire(old, (old->mask + 1) * sizeof(std::atomic<MemoryEntry*>));
}

}  // namespace cachet::memory
