// TtStore: the test server's storage, a Tokyo Cabinet abstract database.
//
// Every call goes to the real Tokyo Cabinet function ttserver itself calls
// (tcadbput, tcadbaddint, tcadbmisc, ...), so the storage semantics are the real
// ones: addint's 4-byte host-order record, adddouble's 8-byte double, putcat on a
// missing key, misc's putlist/outlist/getlist. The one piece ttserver adds on top
// of Tokyo Cabinet, putshl, is done here the way ttserver does it.
//
// One mutex serializes all calls: ttserver's iterator is shared by every
// connection, and so is this one. Thread-safe.
#pragma once

#include <tcadb.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cachet::ttserver {

class TtStore {
 public:
  // `name` is a tcadbopen name: "*" for an on-memory hash database (the default),
  // "+" for an on-memory tree, or a file such as "casket.tch".
  static std::unique_ptr<TtStore> Open(const std::string& name, std::string* error);
  ~TtStore();
  TtStore(const TtStore&) = delete;
  TtStore& operator=(const TtStore&) = delete;

  bool Put(std::string_view key, std::string_view value);
  bool PutKeep(std::string_view key, std::string_view value);
  bool PutCat(std::string_view key, std::string_view value);
  // Appends, then keeps the last `width` bytes.
  bool PutShl(std::string_view key, std::string_view value, int width);
  bool Out(std::string_view key);
  std::optional<std::string> Get(std::string_view key);
  int Vsiz(std::string_view key);  // -1 when missing
  bool IterInit();
  std::optional<std::string> IterNext();
  std::vector<std::string> FwmKeys(std::string_view prefix, int max);
  std::optional<int> AddInt(std::string_view key, int num);
  std::optional<double> AddDouble(std::string_view key, double num);
  bool Sync();
  bool Optimize(const std::string& params);
  bool Vanish();
  bool Copy(const std::string& path);
  std::uint64_t Rnum();
  std::uint64_t Size();
  std::string Path();
  // nullopt when Tokyo Cabinet reports failure (an unknown name, bad arguments).
  std::optional<std::vector<std::string>> Misc(const std::string& name,
                                               const std::vector<std::string>& args);

 private:
  explicit TtStore(TCADB* db) : db_(db) {}

  std::mutex mutex_;
  TCADB* db_;  // owned
};

}  // namespace cachet::ttserver
