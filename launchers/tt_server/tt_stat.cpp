// stat text of the test server (see tt_stat.h).
#include "tt_stat.h"

#include <tcutil.h>
#include <unistd.h>

#include <chrono>
#include <string_view>

namespace cachet::ttserver {
namespace {

void AddLine(std::string_view name, std::string_view value, std::string* out) {
  out->append(name);
  out->push_back('\t');
  out->append(value);
  out->push_back('\n');
}

}  // namespace

std::string StatText(TtStore& store) {
  using std::chrono::duration;
  using std::chrono::system_clock;
  const double now = duration<double>(system_clock::now().time_since_epoch()).count();
  std::string out;
  // The version this server imitates, so clients that check it see the real one.
  AddLine("version", "1.1.41", &out);
  AddLine("libver", tcversion, &out);
  AddLine("protver", "0.91", &out);
  AddLine("os", "Linux", &out);
  AddLine("time", std::to_string(now), &out);
  AddLine("pid", std::to_string(getpid()), &out);
  AddLine("path", store.Path(), &out);
  AddLine("rnum", std::to_string(store.Rnum()), &out);
  AddLine("size", std::to_string(store.Size()), &out);
  AddLine("bigend", "0", &out);
  return out;
}

}  // namespace cachet::ttserver
