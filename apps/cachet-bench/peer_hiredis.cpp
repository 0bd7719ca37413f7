// The hiredis peer. Commands go through redisCommandArgv with binary-safe
// lengths; pipeline appends 100 INCR and then reads the 100 replies. Redis has no
// noreply: that scenario reports it unsupported.
#include "peer_hiredis.h"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <vector>

#include "peer_codec.h"

namespace cachet::bench {
namespace {

using Context = std::unique_ptr<redisContext, decltype(&redisFree)>;
using Reply = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;

Status ContextError(const redisContext* c) {
  return Status::IoError(std::string("hiredis: ") + (c->errstr[0] ? c->errstr : "no reply"));
}

Status ReplyError(const redisReply* r) {
  return Status::IoError("hiredis: " + std::string(r->str, r->len));
}

class HiredisClient : public PeerClient {
 public:
  explicit HiredisClient(Context c) : c_(std::move(c)) {}

  Status Get(std::string_view key, std::string* value) override {
    Result<Reply> r = Command({"GET", key});
    if (!r.ok()) return r.status();
    if ((*r)->type == REDIS_REPLY_NIL) return Status::NotFound();
    value->assign((*r)->str, (*r)->len);
    return Status::OK();
  }
  Status Set(std::string_view key, std::string_view value) override {
    return Command({"SET", key, value}).status();
  }
  Status Remove(std::string_view key) override {
    Result<Reply> r = Command({"DEL", key});
    if (!r.ok()) return r.status();
    return (*r)->integer == 0 ? Status::NotFound() : Status::OK();
  }
  Status Incr(std::string_view key, std::uint64_t* value) override {
    return Counter("INCR", key, value);
  }
  Status Decr(std::string_view key, std::uint64_t* value) override {
    return Counter("DECR", key, value);
  }
  Status GetMulti(const std::vector<std::string>& keys, std::size_t* hits) override;
  Status IncrPipelined(std::string_view key, std::size_t count) override;
  Status IncrNoreply(std::string_view) override {
    return Status::Unsupported("redis has no noreply");
  }

 private:
  void PrepareArgs(std::initializer_list<std::string_view> args) {
    argv_.clear();
    lengths_.clear();
    for (std::string_view arg : args) {
      argv_.push_back(arg.data());
      lengths_.push_back(arg.size());
    }
  }

  Result<Reply> Command(std::initializer_list<std::string_view> args) {
    PrepareArgs(args);
    return Finish(static_cast<redisReply*>(
        redisCommandArgv(c_.get(), static_cast<int>(argv_.size()), argv_.data(), lengths_.data())));
  }

  Result<Reply> Finish(redisReply* raw) {
    if (raw == nullptr) return ContextError(c_.get());
    Reply reply(raw, &freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR) return ReplyError(reply.get());
    return reply;
  }

  Status Counter(const char* command, std::string_view key, std::uint64_t* value) {
    Result<Reply> r = Command({command, key});
    if (!r.ok()) return r.status();
    *value = static_cast<std::uint64_t>((*r)->integer);
    return Status::OK();
  }

  Context c_;
  std::vector<const char*> argv_;
  std::vector<std::size_t> lengths_;
};

Status HiredisClient::GetMulti(const std::vector<std::string>& keys, std::size_t* hits) {
  argv_.assign(1, "MGET");
  lengths_.assign(1, 4);
  for (const std::string& key : keys) {
    argv_.push_back(key.data());
    lengths_.push_back(key.size());
  }
  Result<Reply> r = Finish(static_cast<redisReply*>(
      redisCommandArgv(c_.get(), static_cast<int>(argv_.size()), argv_.data(), lengths_.data())));
  if (!r.ok()) return r.status();
  *hits = 0;
  for (std::size_t i = 0; i < (*r)->elements; ++i) {
    if ((*r)->element[i]->type != REDIS_REPLY_NIL) ++*hits;
  }
  return Status::OK();
}

Status HiredisClient::IncrPipelined(std::string_view key, std::size_t count) {
  PrepareArgs({"INCR", key});
  for (std::size_t i = 0; i < count; ++i) {
    if (redisAppendCommandArgv(c_.get(), 2, argv_.data(), lengths_.data()) != REDIS_OK) {
      return ContextError(c_.get());
    }
  }
  Status first_error;
  for (std::size_t i = 0; i < count; ++i) {
    void* raw = nullptr;
    if (redisGetReply(c_.get(), &raw) != REDIS_OK) return ContextError(c_.get());
    Result<Reply> r = Finish(static_cast<redisReply*>(raw));
    if (!r.ok() && first_error.ok()) first_error = r.status();
  }
  return first_error;
}

}  // namespace

Result<std::unique_ptr<Client>> ConnectHiredis(const std::string& server) {
  const auto colon = server.rfind(':');
  const std::string host = server.substr(0, colon);
  Context c(redisConnect(host.c_str(), std::atoi(server.c_str() + colon + 1)), &redisFree);
  if (!c) return Status::Internal("hiredis: redisConnect failed");
  if (c->err) return ContextError(c.get());
  return std::unique_ptr<Client>(std::make_unique<HiredisClient>(std::move(c)));
}

}  // namespace cachet::bench
