// What the peers do to values that cachet's codec does for the Cache: Json text
// for structured values (as the json serializer) and zstd for compressed ones,
// and PeerClient, the peers' common half that applies them around plain gets and
// sets as a user of a C client library would. Library exceptions stop here and
// become a Status.
#pragma once

#include <string>
#include <string_view>

#include "cachet/codec.h"
#include "cachet/status.h"
#include "client.h"

namespace cachet::bench {

Status SerializeJson(const Json& doc, std::string* out);
Status ParseJson(std::string_view text, Json* doc);
Status ZstdCompress(std::string_view input, std::string* out);
Status ZstdDecompress(std::string_view input, std::string* out);

// A peer's structured and compressed values: its plain Get/Set around the
// encodings above, through one reused buffer.
class PeerClient : public Client {
 public:
  Status GetJson(std::string_view key, Json* doc) override {
    Status status = Get(key, &encoded_);
    return status.ok() ? ParseJson(encoded_, doc) : status;
  }
  Status SetJson(std::string_view key, const Json& doc) override {
    Status status = SerializeJson(doc, &encoded_);
    return status.ok() ? Set(key, encoded_) : status;
  }
  Status GetCompressed(std::string_view key, std::string* value) override {
    Status status = Get(key, &encoded_);
    return status.ok() ? ZstdDecompress(encoded_, value) : status;
  }
  Status SetCompressed(std::string_view key, std::string_view value) override {
    Status status = ZstdCompress(value, &encoded_);
    return status.ok() ? Set(key, encoded_) : status;
  }

 private:
  std::string encoded_;
};

}  // namespace cachet::bench
