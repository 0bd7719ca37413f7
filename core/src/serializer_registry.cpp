// SerializerRegistry: names and ids to serializers, guarded by a shared mutex so
// lookups from many threads proceed together. Also Serializer's out-of-line
// destructor, so its vtable lives once, in libcachet.
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "cachet/serializer.h"
#include "serializers.h"

namespace cachet {

Serializer::~Serializer() = default;

struct SerializerRegistry::State {
  mutable std::shared_mutex mutex;
  std::map<std::string, std::unique_ptr<Serializer>, std::less<>> by_name;
  std::map<std::uint8_t, const Serializer*> by_id;
};

SerializerRegistry::SerializerRegistry() : state_(std::make_unique<State>()) {}
SerializerRegistry::~SerializerRegistry() = default;

SerializerRegistry& SerializerRegistry::Global() {
  // Never destroyed: Serializer pointers handed out must stay valid until exit.
  static SerializerRegistry* const registry = [] {
    auto* r = new SerializerRegistry();
    RegisterBuiltinSerializers(*r);
    return r;
  }();
  return *registry;
}

Status SerializerRegistry::Register(std::unique_ptr<Serializer> serializer) {
  if (serializer == nullptr) return Status::InvalidArgument("cannot register a null serializer");
  const std::string name(serializer->name());
  const std::uint8_t id = serializer->id();
  if (name.empty()) return Status::InvalidArgument("a serializer needs a name");
  if (id == 0 || id > 15) {
    return Status::InvalidArgument("serializer '" + name + "': id " + std::to_string(id) +
                                   " is outside 1..15");
  }
  std::unique_lock lock(state_->mutex);
  if (state_->by_name.count(name) != 0) {
    return Status::InvalidArgument("serializer '" + name + "' is already registered");
  }
  if (auto it = state_->by_id.find(id); it != state_->by_id.end()) {
    return Status::InvalidArgument("serializer id " + std::to_string(id) + " is taken by '" +
                                   std::string(it->second->name()) + "'");
  }
  state_->by_id[id] = serializer.get();
  state_->by_name.emplace(name, std::move(serializer));
  return Status::OK();
}

const Serializer* SerializerRegistry::Find(std::string_view name) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->by_name.find(name);
  return it == state_->by_name.end() ? nullptr : it->second.get();
}

const Serializer* SerializerRegistry::FindById(std::uint8_t id) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->by_id.find(id);
  return it == state_->by_id.end() ? nullptr : it->second;
}

std::vector<std::string> SerializerRegistry::Names() const {
  std::shared_lock lock(state_->mutex);
  std::vector<std::string> names;
  names.reserve(state_->by_name.size());
  for (const auto& entry : state_->by_name) names.push_back(entry.first);
  return names;
}

}  // namespace cachet
