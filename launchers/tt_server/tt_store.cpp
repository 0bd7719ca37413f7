// TtStore over Tokyo Cabinet's abstract database (see tt_store.h).
#include "tt_store.h"

#include <tcutil.h>

#include <climits>
#include <cmath>
#include <cstdlib>

namespace cachet::ttserver {
namespace {

int IntSize(std::string_view s) { return static_cast<int>(s.size()); }

// Takes ownership of a malloc'ed region returned by Tokyo Cabinet.
std::string TakeRegion(void* region, int size) {
  std::string out(static_cast<const char*>(region), static_cast<std::size_t>(size));
  std::free(region);
  return out;
}

std::vector<std::string> TakeList(TCLIST* list) {
  std::vector<std::string> out;
  const int n = tclistnum(list);
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    int size = 0;
    const void* element = tclistval(list, i, &size);
    out.emplace_back(static_cast<const char*>(element), static_cast<std::size_t>(size));
  }
  tclistdel(list);
  return out;
}

}  // namespace

std::unique_ptr<TtStore> TtStore::Open(const std::string& name, std::string* error) {
  TCADB* db = tcadbnew();
  if (!tcadbopen(db, name.c_str())) {
    tcadbdel(db);
    *error = "cannot open Tokyo Cabinet database '" + name + "'";
    return nullptr;
  }
  return std::unique_ptr<TtStore>(new TtStore(db));
}

TtStore::~TtStore() {
  tcadbclose(db_);
  tcadbdel(db_);
}

bool TtStore::Put(std::string_view key, std::string_view value) {
  std::lock_guard lock(mutex_);
  return tcadbput(db_, key.data(), IntSize(key), value.data(), IntSize(value));
}

bool TtStore::PutKeep(std::string_view key, std::string_view value) {
  std::lock_guard lock(mutex_);
  return tcadbputkeep(db_, key.data(), IntSize(key), value.data(), IntSize(value));
}

bool TtStore::PutCat(std::string_view key, std::string_view value) {
  std::lock_guard lock(mutex_);
  return tcadbputcat(db_, key.data(), IntSize(key), value.data(), IntSize(value));
}

bool TtStore::PutShl(std::string_view key, std::string_view value, int width) {
  std::lock_guard lock(mutex_);
  int old_size = 0;
  void* old = tcadbget(db_, key.data(), IntSize(key), &old_size);
  std::string joined = old ? TakeRegion(old, old_size) : std::string();
  joined.append(value);
  if (joined.size() > static_cast<std::size_t>(width)) {
    joined.erase(0, joined.size() - static_cast<std::size_t>(width));
  }
  return tcadbput(db_, key.data(), IntSize(key), joined.data(), IntSize(joined));
}

bool TtStore::Out(std::string_view key) {
  std::lock_guard lock(mutex_);
  return tcadbout(db_, key.data(), IntSize(key));
}

std::optional<std::string> TtStore::Get(std::string_view key) {
  std::lock_guard lock(mutex_);
  int size = 0;
  void* value = tcadbget(db_, key.data(), IntSize(key), &size);
  if (!value) return std::nullopt;
  return TakeRegion(value, size);
}

int TtStore::Vsiz(std::string_view key) {
  std::lock_guard lock(mutex_);
  return tcadbvsiz(db_, key.data(), IntSize(key));
}

bool TtStore::IterInit() {
  std::lock_guard lock(mutex_);
  return tcadbiterinit(db_);
}

std::optional<std::string> TtStore::IterNext() {
  std::lock_guard lock(mutex_);
  int size = 0;
  void* key = tcadbiternext(db_, &size);
  if (!key) return std::nullopt;
  return TakeRegion(key, size);
}

std::vector<std::string> TtStore::FwmKeys(std::string_view prefix, int max) {
  std::lock_guard lock(mutex_);
  return TakeList(tcadbfwmkeys(db_, prefix.data(), IntSize(prefix), max));
}

std::optional<int> TtStore::AddInt(std::string_view key, int num) {
  std::lock_guard lock(mutex_);
  const int sum = tcadbaddint(db_, key.data(), IntSize(key), num);
  if (sum == INT_MIN) return std::nullopt;  // Tokyo Cabinet's failure value
  return sum;
}

std::optional<double> TtStore::AddDouble(std::string_view key, double num) {
  std::lock_guard lock(mutex_);
  const double sum = tcadbadddouble(db_, key.data(), IntSize(key), num);
  if (std::isnan(sum)) return std::nullopt;  // Tokyo Cabinet's failure value
  return sum;
}

bool TtStore::Sync() {
  std::lock_guard lock(mutex_);
  return tcadbsync(db_);
}

bool TtStore::Optimize(const std::string& params) {
  std::lock_guard lock(mutex_);
  return tcadboptimize(db_, params.c_str());
}

bool TtStore::Vanish() {
  std::lock_guard lock(mutex_);
  return tcadbvanish(db_);
}

bool TtStore::Copy(const std::string& path) {
  std::lock_guard lock(mutex_);
  return tcadbcopy(db_, path.c_str());
}

std::uint64_t TtStore::Rnum() {
  std::lock_guard lock(mutex_);
  return tcadbrnum(db_);
}

std::uint64_t TtStore::Size() {
  std::lock_guard lock(mutex_);
  return tcadbsize(db_);
}

std::string TtStore::Path() {
  std::lock_guard lock(mutex_);
  const char* path = tcadbpath(db_);
  return path ? path : "";
}

std::optional<std::vector<std::string>> TtStore::Misc(const std::string& name,
                                                      const std::vector<std::string>& args) {
  TCLIST* list = tclistnew2(static_cast<int>(args.size()) + 1);
  for (const std::string& arg : args) tclistpush(list, arg.data(), IntSize(arg));
  TCLIST* result = nullptr;
  {
    std::lock_guard lock(mutex_);
    result = tcadbmisc(db_, name.c_str(), list);
  }
  tclistdel(list);
  if (!result) return std::nullopt;
  return TakeList(result);
}

}  // namespace cachet::ttserver
