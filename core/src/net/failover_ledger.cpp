// FailoverLedger: noting keys written around a dead server, handing them over.
#include "cachet/net/failover_ledger.h"

#include <algorithm>
#include <utility>

namespace cachet::net {

namespace {

bool AnyBit(const std::vector<bool>& bits) {
  return std::find(bits.begin(), bits.end(), true) != bits.end();
}

}  // namespace

bool FailoverLedger::Debt::OwnerOwes() const { return AnyBit(moved_to); }

FailoverLedger::FailoverLedger(std::size_t servers, std::size_t max_keys)
    : max_keys_(max_keys), owners_(servers) {
  for (Owner& owner : owners_) {
    owner.moved_to.assign(servers, false);
    owner.stale_on.assign(servers, false);
  }
}

void FailoverLedger::Note(Owner& owner, std::string_view key) {
  if (owner.overflowed) return;
  if (owner.keys.size() >= max_keys_ && !owner.keys.contains(std::string(key))) {
    // A flush will do what the keys would: they are no longer worth keeping.
    owner.overflowed = true;
    owner.keys.clear();
    owner.last_server.clear();
    return;
  }
  owner.keys.emplace(key);
}

void FailoverLedger::MarkOwing(Owner& owner) {
  if (owner.owes) return;
  owner.owes = true;
  owing_.fetch_add(1, std::memory_order_relaxed);
}

void FailoverLedger::HandOver(Owner& owner, bool with_owner, Debt* debt) {
  owner.repairing = true;
  owner.repairing_owner = with_owner && AnyBit(owner.moved_to);
  // The keys go whole: Settle() gives them back unless nothing stays owed.
  debt->keys.assign(owner.keys.begin(), owner.keys.end());
  debt->overflowed = owner.overflowed;
  owner.keys.clear();
  owner.overflowed = false;
  debt->moved_to.assign(owner.moved_to.size(), false);
  debt->last_server.clear();
  if (with_owner) {
    std::swap(debt->moved_to, owner.moved_to);
    // A copy: while the repair runs, keys still go where they went (Settle
    // forgets these once the owner serves them again).
    debt->last_server = owner.last_server;
  }
  // Kept in the ledger while repaired: TakeStale() must see them till then.
  debt->stale_on = owner.stale_on;
}

void FailoverLedger::Record(std::size_t owner, std::string_view key, std::size_t server,
                            bool routed) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  Note(o, key);
  if (routed && !o.overflowed) o.last_server[std::string(key)] = server;
  o.moved_to[server] = true;
  MarkOwing(o);
}

bool FailoverLedger::LastServer(std::size_t owner, std::string_view key, std::size_t* server) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Owner& o = owners_[owner];
  const auto found = o.last_server.find(std::string(key));
  if (found == o.last_server.end()) return false;
  *server = found->second;
  return true;
}

FailoverLedger::Claim FailoverLedger::Take(std::size_t owner, std::int64_t now_ns, Debt* debt) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  if (!o.owes) return Claim::kClear;
  const bool owner_owes = o.repairing_owner || AnyBit(o.moved_to);
  if (o.repairing || now_ns < o.retry_at_ns) return owner_owes ? Claim::kBusy : Claim::kClear;
  HandOver(o, true, debt);
  return Claim::kTaken;
}

FailoverLedger::Claim FailoverLedger::TakeStale(std::size_t owner, std::size_t server, Debt* debt) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  if (!o.stale_on[server]) return Claim::kClear;
  if (o.repairing) return Claim::kBusy;
  // The owner is out of routing: only the stale servers are repaired.
  HandOver(o, false, debt);
  return Claim::kTaken;
}

bool FailoverLedger::Settle(std::size_t owner, Debt debt, const std::vector<bool>& cleaned,
                            std::int64_t retry_at_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  Owner& o = owners_[owner];
  o.repairing = false;
  o.repairing_owner = false;
  const bool owner_clean = !debt.OwnerOwes() || cleaned[owner];
  bool complete = owner_clean;
  for (std::size_t s = 0; s < o.moved_to.size(); ++s) {
    if (!debt.moved_to[s] && !debt.stale_on[s]) continue;
    if (cleaned[s]) {
      o.stale_on[s] = false;
    } else {
      complete = false;
    }
    if (!debt.moved_to[s]) continue;
    if (!owner_clean) {
      // The owner keeps its older values: everything stays as it was.
      o.moved_to[s] = true;
    } else if (!cleaned[s]) {
      // The owner serves again; this server keeps copies it must not serve.
      o.stale_on[s] = true;
    }
  }
  if (!complete) o.retry_at_ns = retry_at_ns;
  // The owner serves its keys again: where they went before the repair is
  // history (a key routed elsewhere during the repair keeps its newer entry).
  if (owner_clean) {
    for (const auto& [key, server] : debt.last_server) {
      const auto now = o.last_server.find(key);
      if (now != o.last_server.end() && now->second == server) o.last_server.erase(now);
    }
  }
  // Writes routed around the owner while it was repaired are owed still.
  if (AnyBit(o.moved_to) || AnyBit(o.stale_on)) {
    if (debt.overflowed) {
      o.overflowed = true;
      o.last_server.clear();
    }
    for (std::string& key : debt.keys) Note(o, key);
  } else if (o.owes) {
    o.owes = false;
    owing_.fetch_sub(1, std::memory_order_relaxed);
  }
  return owner_clean;
}

}  // namespace cachet::net
