// FailoverLedger: noting keys written around a dead server, handing them over.
#include "failover_ledger.h"

#include <utility>

namespace cachet::memcached {

FailoverLedger::FailoverLedger(std::size_t servers, std::size_t max_keys)
    : max_keys_(max_keys), owners_(servers) {
  for (Owner& owner : owners_) owner.moved_to.assign(servers, false);
}

void FailoverLedger::Note(Owner& owner, std::string_view key) {
  if (owner.overflowed) return;
  if (owner.keys.size() >= max_keys_ && !owner.keys.contains(std::string(key))) {
    // A flush will do what the keys would: they are no longer worth keeping.
    owner.overflowed = true;
    owner.keys.clear();
    return;
  }
  owner.keys.emplace(key);
}

void FailoverLedger::MarkOwing(Owner& owner) {
  if (owner.owes) return;
  owner.owes = true;
  owing_.fetch_add(1, std::memory_order_relaxed);
}

void FailoverLedger::Record(std::size_t owner, std::string_view key, std::size_t server) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  Note(o, key);
  o.moved_to[server] = true;
  MarkOwing(o);
}

FailoverLedger::Claim FailoverLedger::Take(std::size_t owner, std::int64_t now_ns, Debt* debt) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  if (o.repairing || (o.owes && now_ns < o.retry_at_ns)) return Claim::kBusy;
  if (!o.owes) return Claim::kClear;
  o.repairing = true;
  debt->keys.assign(o.keys.begin(), o.keys.end());
  debt->moved_to = o.moved_to;
  debt->overflowed = o.overflowed;
  o.keys.clear();
  o.moved_to.assign(o.moved_to.size(), false);
  o.overflowed = false;
  return Claim::kTaken;
}

void FailoverLedger::Settle(std::size_t owner, bool repaired, Debt debt, std::int64_t retry_at_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  o.repairing = false;
  if (!repaired) {
    o.retry_at_ns = retry_at_ns;
    if (debt.overflowed) o.overflowed = true;
    for (std::string& key : debt.keys) Note(o, key);
    for (std::size_t s = 0; s < o.moved_to.size(); ++s) {
      if (debt.moved_to[s]) o.moved_to[s] = true;
    }
    return;
  }
  // Writes routed around the owner while it was repaired are owed still.
  bool still_owed = o.overflowed || !o.keys.empty();
  for (bool moved : o.moved_to) still_owed = still_owed || moved;
  if (!still_owed) {
    o.owes = false;
    owing_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace cachet::memcached
