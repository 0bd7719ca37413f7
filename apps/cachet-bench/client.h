// Client: what a benchmark scenario drives. One implementation wraps a cachet
// Cache; the peers (libmemcached, hiredis) implement it with their own libraries,
// so every column of a table runs the very same scenario code.
//
// A Client is used by one thread at a time. Operations answer ok, not_found on a
// miss, unsupported when the store or library cannot do it, or the error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/codec.h"
#include "cachet/status.h"

namespace cachet::bench {

class Client {
 public:
  virtual ~Client() = default;

  virtual Status Get(std::string_view key, std::string* value) = 0;
  virtual Status Set(std::string_view key, std::string_view value) = 0;
  virtual Status Remove(std::string_view key) = 0;
  virtual Status Incr(std::string_view key, std::uint64_t* value) = 0;
  virtual Status Decr(std::string_view key, std::uint64_t* value) = 0;
  // `*hits` is the number of keys found; the call fails only on an error.
  virtual Status GetMulti(const std::vector<std::string>& keys, std::size_t* hits) = 0;

  // A structured value, serialized as the client does it.
  virtual Status GetJson(std::string_view key, Json* doc) = 0;
  virtual Status SetJson(std::string_view key, const Json& doc) = 0;
  // A value compressed by the client before it is sent.
  virtual Status GetCompressed(std::string_view key, std::string* value) = 0;
  virtual Status SetCompressed(std::string_view key, std::string_view value) = 0;

  // `count` increments of `key` sent in one round trip; unsupported if the client
  // cannot pipeline them.
  virtual Status IncrPipelined(std::string_view key, std::size_t count) = 0;
  // One increment sent without waiting for a reply; unsupported if the store has
  // no noreply.
  virtual Status IncrNoreply(std::string_view key) = 0;
};

}  // namespace cachet::bench
