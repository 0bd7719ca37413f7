// CacheClient: each operation is the Cache call an application would make.
#include "cache_client.h"

namespace cachet::bench {
namespace {

template <class T>
Status Take(Lookup<T>&& found, T* out) {
  if (!found.hit()) return found.status();
  *out = std::move(found).value();
  return Status::OK();
}

Status TakeCounter(Result<std::uint64_t>&& result, std::uint64_t* out) {
  if (!result.ok()) return result.status();
  *out = result.value();
  return Status::OK();
}

}  // namespace

Status CacheClient::Get(std::string_view key, std::string* value) {
  return cache_->GetInto(key, value);
}

Status CacheClient::Set(std::string_view key, std::string_view value) {
  return cache_->Set(key, value);
}

Status CacheClient::Remove(std::string_view key) { return cache_->Remove(key); }

Status CacheClient::Incr(std::string_view key, std::uint64_t* value) {
  return TakeCounter(cache_->Incr(key), value);
}

Status CacheClient::Decr(std::string_view key, std::uint64_t* value) {
  return TakeCounter(cache_->Decr(key), value);
}

Status CacheClient::GetMulti(const std::vector<std::string>& keys, std::size_t* hits) {
  *hits = 0;
  multi_keys_.assign(keys.begin(), keys.end());
  cache_->GetMultiInto(multi_keys_, &multi_values_, &multi_statuses_);
  for (const Status& status : multi_statuses_) {
    if (status.IsError()) return status;
    if (status.ok()) ++*hits;
  }
  return Status::OK();
}

Status CacheClient::GetJson(std::string_view key, Json* doc) {
  return Take(cache_->Get<Json>(key), doc);
}

Status CacheClient::SetJson(std::string_view key, const Json& doc) { return cache_->Set(key, doc); }

Status CacheClient::GetCompressed(std::string_view key, std::string* value) {
  return compressing_->GetInto(key, value);
}

Status CacheClient::SetCompressed(std::string_view key, std::string_view value) {
  return compressing_->Set(key, value);
}

Status CacheClient::IncrPipelined(std::string_view key, std::size_t count) {
  // One batch, kept from call to call as an application pipelining in a loop
  // keeps it: once warm, refilling it allocates nothing.
  Batch& batch = PipelineBatch();
  batch.Clear();
  pipelined_.clear();
  for (std::size_t i = 0; i < count; ++i) pipelined_.push_back(batch.Incr(key));
  cache_->Run(batch);
  for (const BatchCounter counter : pipelined_) {
    const Status& s = batch.StatusOf(counter);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status CacheClient::IncrNoreply(std::string_view key) {
  Batch& batch = PipelineBatch();
  batch.Clear();
  const BatchCounter counter = batch.Incr(key);
  batch.Noreply(counter);
  cache_->Run(batch);
  return batch.StatusOf(counter);
}

Batch& CacheClient::PipelineBatch() {
  if (batch_ == nullptr) batch_ = std::make_unique<Batch>(*cache_);
  return *batch_;
}

}  // namespace cachet::bench
