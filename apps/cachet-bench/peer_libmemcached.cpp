// The libmemcached peer. Each call is the one a libmemcached user would write;
// values are freed as the library asks. It has no pipelined incr: the pipeline
// scenario reports it unsupported.
#include "peer_libmemcached.h"

#include <libmemcached/memcached.h>

#include <cstdlib>
#include <vector>

#include "peer_codec.h"

namespace cachet::bench {
namespace {

using Handle = std::unique_ptr<memcached_st, decltype(&memcached_free)>;

Status ToStatus(memcached_st* mc, memcached_return_t rc) {
  if (memcached_success(rc)) return Status::OK();
  if (rc == MEMCACHED_NOTFOUND) return Status::NotFound();
  return Status::IoError(std::string("libmemcached: ") + memcached_strerror(mc, rc));
}

Result<Handle> Open(const std::string& server, bool noreply) {
  const auto colon = server.rfind(':');
  const std::string host = server.substr(0, colon);
  const auto port = static_cast<in_port_t>(std::atoi(server.c_str() + colon + 1));
  Handle mc(memcached_create(nullptr), &memcached_free);
  if (!mc) return Status::Internal("libmemcached: memcached_create failed");
  memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
  if (noreply) memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_NOREPLY, 1);
  Status status = ToStatus(mc.get(), memcached_server_add(mc.get(), host.c_str(), port));
  if (!status.ok()) return status;
  return mc;
}

class LibmemcachedClient : public PeerClient {
 public:
  LibmemcachedClient(Handle mc, Handle noreply) : mc_(std::move(mc)), noreply_(std::move(noreply)) {
    // One result reused by every fetch, as a careful libmemcached user does.
    memcached_result_create(mc_.get(), &result_);
  }
  ~LibmemcachedClient() override { memcached_result_free(&result_); }

  Status Get(std::string_view key, std::string* value) override {
    std::size_t length = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    char* bytes = memcached_get(mc_.get(), key.data(), key.size(), &length, &flags, &rc);
    if (bytes == nullptr) {
      // libmemcached answers an empty value with NULL and success.
      if (!memcached_success(rc)) return ToStatus(mc_.get(), rc);
      value->clear();
      return Status::OK();
    }
    value->assign(bytes, length);
    std::free(bytes);
    return Status::OK();
  }
  Status Set(std::string_view key, std::string_view value) override {
    return ToStatus(mc_.get(), memcached_set(mc_.get(), key.data(), key.size(), value.data(),
                                             value.size(), 0, 0));
  }
  Status Remove(std::string_view key) override {
    return ToStatus(mc_.get(), memcached_delete(mc_.get(), key.data(), key.size(), 0));
  }
  Status Incr(std::string_view key, std::uint64_t* value) override {
    return ToStatus(mc_.get(), memcached_increment(mc_.get(), key.data(), key.size(), 1, value));
  }
  Status Decr(std::string_view key, std::uint64_t* value) override {
    return ToStatus(mc_.get(), memcached_decrement(mc_.get(), key.data(), key.size(), 1, value));
  }
  Status GetMulti(const std::vector<std::string>& keys, std::size_t* hits) override;
  Status IncrPipelined(std::string_view, std::size_t) override {
    return Status::Unsupported("libmemcached has no pipelined incr with replies");
  }
  Status IncrNoreply(std::string_view key) override {
    std::uint64_t ignored = 0;
    return ToStatus(noreply_.get(),
                    memcached_increment(noreply_.get(), key.data(), key.size(), 1, &ignored));
  }

 private:
  Handle mc_;
  Handle noreply_;  // a second connection with MEMCACHED_BEHAVIOR_NOREPLY
  memcached_result_st result_;
  std::vector<const char*> key_pointers_;
  std::vector<std::size_t> key_lengths_;
};

Status LibmemcachedClient::GetMulti(const std::vector<std::string>& keys, std::size_t* hits) {
  key_pointers_.clear();
  key_lengths_.clear();
  for (const std::string& key : keys) {
    key_pointers_.push_back(key.data());
    key_lengths_.push_back(key.size());
  }
  Status status = ToStatus(
      mc_.get(), memcached_mget(mc_.get(), key_pointers_.data(), key_lengths_.data(), keys.size()));
  if (!status.ok()) return status;
  *hits = 0;
  memcached_return_t rc = MEMCACHED_SUCCESS;
  // Bounded: the server answers at most one value per key, then END.
  for (std::size_t i = 0; i <= keys.size(); ++i) {
    if (memcached_fetch_result(mc_.get(), &result_, &rc) == nullptr) break;
    ++*hits;
  }
  return rc == MEMCACHED_END || memcached_success(rc) ? Status::OK() : ToStatus(mc_.get(), rc);
}

}  // namespace

Result<std::unique_ptr<Client>> ConnectLibmemcached(const std::string& server) {
  Result<Handle> mc = Open(server, false);
  if (!mc.ok()) return mc.status();
  Result<Handle> noreply = Open(server, true);
  if (!noreply.ok()) return noreply.status();
  return std::unique_ptr<Client>(
      std::make_unique<LibmemcachedClient>(std::move(mc).value(), std::move(noreply).value()));
}

}  // namespace cachet::bench
