// FakeBackend (see fake_backend.h).
#include "support/fake_backend.h"

#include <charconv>
#include <system_error>
#include <utility>

namespace cachet::test {

FakeBackend::FakeBackend() : FakeBackend(Options{}) {}

FakeBackend::FakeBackend(Options options) : options_(std::move(options)) {}

Status FakeBackend::Admit(std::string_view key) {
  keys_seen_.emplace_back(key);
  if (failure_) return *failure_;
  if (options_.memcached_keys) {
    for (const char c : key) {
      if (static_cast<unsigned char>(c) <= ' ' || c == '\x7f') {
        return Status::InvalidArgument("fake: a space or control character in the key");
      }
    }
  }
  return Status::OK();
}

FakeBackend::Map::iterator FakeBackend::Live(std::string_view key) {
  auto it = items_.find(key);
  if (it != items_.end() && std::chrono::steady_clock::now() >= it->second.expires) {
    items_.erase(it);
    return items_.end();
  }
  return it;
}

void FakeBackend::SetExpiry(Entry* entry, Ttl ttl) const {
  entry->ttl = ttl;
  entry->expires = options_.expire && ttl.count() > 0 ? std::chrono::steady_clock::now() + ttl
                                                      : std::chrono::steady_clock::time_point::max();
}

Status FakeBackend::Get(std::string_view key, Item* out) {
  std::lock_guard lock(mutex_);
  ++gets_;
  if (Status s = Admit(key); !s.ok()) return s;
  auto it = Live(key);
  if (it == items_.end()) {
    ++misses_[std::string(key)];
    return Status::NotFound();
  }
  *out = it->second.item;
  return Status::OK();
}

Status FakeBackend::Store(StoreMode mode, std::string_view key, ItemView item,
                          const WriteOptions& options) {
  std::lock_guard lock(mutex_);
  if (Status s = Admit(key); !s.ok()) return s;
  if (options.ttl.count() < 0) return NegativeTtlError(options_.name);
  last_ttl_ = options.ttl;
  ttls_[std::string(key)] = options.ttl;
  auto it = Live(key);
  const bool present = it != items_.end();
  switch (mode) {
    case StoreMode::kAdd:
      if (present) return Status::NotStored();
      break;
    case StoreMode::kReplace:
      if (!present) return Status::NotStored();
      break;
    case StoreMode::kAppend:
    case StoreMode::kPrepend: {
      if (!present) return Status::NotStored();
      std::string& value = it->second.item.value;
      value = mode == StoreMode::kAppend ? value + std::string(item.value)
                                         : std::string(item.value) + value;
      it->second.item.cas = ++next_cas_;
      return Status::OK();
    }
    case StoreMode::kCas:
      if (!present) return Status::NotFound();
      if (it->second.item.cas != item.cas) return Status::Exists();
      break;
    case StoreMode::kSet:
      break;
  }
  Entry& entry = items_[std::string(key)];
  entry.item = Item{std::string(item.value), options_.keep_flags ? item.flags : 0, ++next_cas_};
  SetExpiry(&entry, options.ttl);
  return Status::OK();
}

Status FakeBackend::Remove(std::string_view key) {
  std::lock_guard lock(mutex_);
  if (Status s = Admit(key); !s.ok()) return s;
  auto it = Live(key);
  if (it == items_.end()) return Status::NotFound();
  items_.erase(it);
  return Status::OK();
}

Status FakeBackend::Count(std::string_view key, std::uint64_t delta, bool incr,
                          std::uint64_t* value) {
  std::lock_guard lock(mutex_);
  if (Status s = Admit(key); !s.ok()) return s;
  auto it = Live(key);
  if (it == items_.end()) return Status::NotFound();
  std::string& text = it->second.item.value;
  std::uint64_t current = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, current);
  if (text.empty() || error != std::errc() || stop != end) {
    return Status::InvalidArgument("fake: the value is not a 64-bit decimal number");
  }
  *value = incr ? current + delta : (current > delta ? current - delta : 0);
  text = std::to_string(*value);
  it->second.item.cas = ++next_cas_;
  return Status::OK();
}

Status FakeBackend::Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Count(key, delta, true, value);
}

Status FakeBackend::Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) {
  return Count(key, delta, false, value);
}

Status FakeBackend::Touch(std::string_view key, Ttl ttl) {
  std::lock_guard lock(mutex_);
  if (Status s = Admit(key); !s.ok()) return s;
  if (ttl.count() < 0) return NegativeTtlError(options_.name);
  auto it = Live(key);
  if (it == items_.end()) return Status::NotFound();
  SetExpiry(&it->second, ttl);
  return Status::OK();
}

Status FakeBackend::Flush() {
  std::lock_guard lock(mutex_);
  if (failure_) return *failure_;
  items_.clear();
  return Status::OK();
}

Status FakeBackend::Stats(StatsMap* out) {
  std::lock_guard lock(mutex_);
  if (failure_) return *failure_;
  out->emplace_back("items", std::to_string(items_.size()));
  out->emplace_back("curr_items", std::to_string(items_.size()));  // memcached's name
  return Status::OK();
}

void FakeBackend::Execute(std::span<Operation> batch) {
  {
    std::lock_guard lock(mutex_);
    ++execute_calls_;
    batch_sizes_.push_back(batch.size());
  }
  Backend::Execute(batch);
}

void FakeBackend::FailWith(Status status) {
  std::lock_guard lock(mutex_);
  failure_ = std::move(status);
}

void FakeBackend::Recover() {
  std::lock_guard lock(mutex_);
  failure_.reset();
}

bool FakeBackend::Has(const std::string& key) {
  std::lock_guard lock(mutex_);
  return Live(key) != items_.end();
}

std::string FakeBackend::Raw(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = Live(key);
  return it == items_.end() ? std::string() : it->second.item.value;
}

Item FakeBackend::Stored(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = Live(key);
  return it == items_.end() ? Item{} : it->second.item;
}

void FakeBackend::Put(const std::string& key, Item item) {
  std::lock_guard lock(mutex_);
  items_[key] = Entry{std::move(item)};
}

void FakeBackend::Put(const std::string& key, std::string value, std::uint32_t flags) {
  std::lock_guard lock(mutex_);
  items_[key] = Entry{Item{std::move(value), flags, ++next_cas_}};
}

std::vector<std::string> FakeBackend::keys_seen() {
  std::lock_guard lock(mutex_);
  return keys_seen_;
}

std::vector<std::size_t> FakeBackend::batch_sizes() {
  std::lock_guard lock(mutex_);
  return batch_sizes_;
}

int FakeBackend::execute_calls() {
  std::lock_guard lock(mutex_);
  return execute_calls_;
}

int FakeBackend::gets() {
  std::lock_guard lock(mutex_);
  return gets_;
}

int FakeBackend::misses(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = misses_.find(key);
  return it == misses_.end() ? 0 : it->second;
}

Ttl FakeBackend::last_ttl() {
  std::lock_guard lock(mutex_);
  return last_ttl_;
}

Ttl FakeBackend::LastTtl(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = ttls_.find(key);
  return it == ttls_.end() ? Ttl{-1} : it->second;
}

void FakeBackend::ResetCounts() {
  std::lock_guard lock(mutex_);
  keys_seen_.clear();
  batch_sizes_.clear();
  misses_.clear();
  ttls_.clear();
  last_ttl_ = Ttl{-1};
  execute_calls_ = 0;
  gets_ = 0;
}

}  // namespace cachet::test
