// CompressorRegistry: names and ids to factories and to one shared default-level
// instance per compressor (what decoding uses). Guarded by a shared mutex so
// lookups from many threads proceed together. Also Compressor's out-of-line
// destructor, so its vtable lives once, in libcachet.
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "cachet/compressor.h"
#include "compressors.h"

namespace cachet {

Compressor::~Compressor() = default;

namespace {

struct Entry {
  CompressorRegistry::Factory factory;
  std::unique_ptr<Compressor> shared_instance;  // default level, for decoding
};

}  // namespace

struct CompressorRegistry::State {
  mutable std::shared_mutex mutex;
  std::map<std::string, Entry, std::less<>> by_name;
  std::map<std::uint8_t, const Compressor*> by_id;
};

CompressorRegistry::CompressorRegistry() : state_(std::make_unique<State>()) {}
CompressorRegistry::~CompressorRegistry() = default;

CompressorRegistry& CompressorRegistry::Global() {
  // Never destroyed: the shared instances must stay valid until exit.
  static CompressorRegistry* const registry = [] {
    auto* r = new CompressorRegistry();
    RegisterBuiltinCompressors(*r);
    return r;
  }();
  return *registry;
}

Status CompressorRegistry::Register(std::string_view name, std::uint8_t id, Factory factory) {
  const std::string owned(name);
  if (owned.empty()) return Status::InvalidArgument("a compressor needs a name");
  if (id > 15) {
    return Status::InvalidArgument("compressor '" + owned + "': id " + std::to_string(id) +
                                   " is outside 0..15");
  }
  if (!factory) return Status::InvalidArgument("compressor '" + owned + "' has no factory");
  Result<std::unique_ptr<Compressor>> instance = factory(0);
  if (!instance.ok()) return instance.status();
  if ((*instance)->id() != id || (*instance)->name() != name) {
    return Status::InvalidArgument("compressor '" + owned + "': the factory makes '" +
                                   std::string((*instance)->name()) + "' with id " +
                                   std::to_string((*instance)->id()));
  }
  std::unique_lock lock(state_->mutex);
  if (state_->by_name.count(owned) != 0) {
    return Status::InvalidArgument("compressor '" + owned + "' is already registered");
  }
  if (auto it = state_->by_id.find(id); it != state_->by_id.end()) {
    return Status::InvalidArgument("compressor id " + std::to_string(id) + " is taken by '" +
                                   std::string(it->second->name()) + "'");
  }
  state_->by_id[id] = instance->get();
  state_->by_name.emplace(owned, Entry{std::move(factory), std::move(instance).value()});
  return Status::OK();
}

Result<std::unique_ptr<Compressor>> CompressorRegistry::Create(std::string_view name,
                                                               int level) const {
  Factory factory;
  {
    std::shared_lock lock(state_->mutex);
    auto it = state_->by_name.find(name);
    if (it != state_->by_name.end()) factory = it->second.factory;
  }
  if (!factory) {
    std::string known;
    for (const std::string& n : Names()) known += (known.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown compressor '" + std::string(name) +
                                   "' (known: " + known + ")");
  }
  return factory(level);
}

const Compressor* CompressorRegistry::FindById(std::uint8_t id) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->by_id.find(id);
  return it == state_->by_id.end() ? nullptr : it->second;
}

std::vector<std::string> CompressorRegistry::Names() const {
  std::shared_lock lock(state_->mutex);
  std::vector<std::string> names;
  names.reserve(state_->by_name.size());
  for (const auto& entry : state_->by_name) names.push_back(entry.first);
  return names;
}

void RegisterBuiltinCompressors(CompressorRegistry& registry) {
  // The registry is empty and the names and ids distinct, so these cannot fail.
  (void)registry.Register("none", 0, MakeNoneCompressor);
  (void)registry.Register("zlib", 1, MakeZlibCompressor);
  (void)registry.Register("gzip", 2, MakeGzipCompressor);
  (void)registry.Register("zstd", 3, MakeZstdCompressor);
}

}  // namespace cachet
