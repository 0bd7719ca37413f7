// ForwardingBackend: a Backend that passes every call to an inner backend, for
// the tests' wrappers that change only a few calls (count reads, record a
// batch, report changes, hold a call): they derive from it and override those.
//
// It forwards the single-key calls, Execute, Flush and Stats, and declares the
// inner backend's capabilities under a name of its own. Leases, Health,
// Extension and SubscribeInvalidations keep Backend's defaults (kUnsupported).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "cachet/backend.h"

namespace cachet::test {

class ForwardingBackend : public Backend {
 public:
  ForwardingBackend(std::string name, std::shared_ptr<Backend> inner)
      : name_(std::move(name)), inner_(std::move(inner)) {}

  std::string_view name() const noexcept override { return name_; }
  Capabilities capabilities() const noexcept override { return inner_->capabilities(); }

  Status Get(std::string_view key, Item* out) override { return inner_->Get(key, out); }
  Status Gets(std::string_view key, Item* out) override { return inner_->Gets(key, out); }
  Status Store(StoreMode mode, std::string_view key, ItemView item,
               const WriteOptions& options) override {
    return inner_->Store(mode, key, item, options);
  }
  Status Remove(std::string_view key) override { return inner_->Remove(key); }
  Status Incr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override {
    return inner_->Incr(key, delta, value);
  }
  Status Decr(std::string_view key, std::uint64_t delta, std::uint64_t* value) override {
    return inner_->Decr(key, delta, value);
  }
  Status Touch(std::string_view key, Ttl ttl) override { return inner_->Touch(key, ttl); }
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out) override {
    return inner_->GetAndTouch(key, ttl, out);
  }
  Status Flush() override { return inner_->Flush(); }
  Status Stats(StatsMap* out) override { return inner_->Stats(out); }
  void Execute(std::span<Operation> batch) override { inner_->Execute(batch); }

 protected:
  // The backend the calls go to, for an override that does more around them.
  Backend& inner() const { return *inner_; }

 private:
  std::string name_;
  std::shared_ptr<Backend> inner_;
};

}  // namespace cachet::test
