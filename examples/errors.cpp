// Errors: every call answers a Status. ok, the ordinary outcomes not_found,
// not_stored and exists (IsError() false), or an error with a code and a message.
// Usage: example_errors [CONFIG [section.key=value]...]
#include <cstdio>

#include "example_cache.h"

namespace {

// The exit codes of the cachet command-line client, for a program that wants
// the same: 0 ok, 1 an ordinary outcome, 2 a bad request or config, 3 the store.
int ExitCodeFor(const cachet::Status& status) {
  if (status.ok()) return 0;
  if (!status.IsError()) return 1;
  if (status.IsInvalidArgument() || status.IsConfigError() || status.IsPluginError()) return 2;
  return 3;  // unavailable, timeout, io_error, protocol_error, corruption, ...
}

void Show(const char* what, const cachet::Status& status) {
  std::printf("%-28s %-40s exit %d\n", what, status.ToString().c_str(), ExitCodeFor(status));
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;
  (void)cache->Remove("order:7");

  // Ordinary outcomes: a precondition that did not hold, not a failure.
  Show("add (absent)", cache->Add("order:7", "new"));
  Show("add (present)", cache->Add("order:7", "again"));  // not_stored
  cachet::Lookup<cachet::Versioned<std::string>> read = cache->Gets("order:7");
  if (!read.hit()) return 3;
  Show("set (changes it)", cache->Set("order:7", "paid"));
  Show("cas (stale token)", cache->Cas("order:7", "shipped", read->cas));  // exists
  Show("remove", cache->Remove("order:7"));
  Show("remove (absent)", cache->Remove("order:7"));  // not_found

  // Errors name what is wrong: here the file, the line and the key.
  auto config = cachet::Config::Parse("[cache]\nbackend = memory\nnamspace = shop:\n", "shop.conf");
  cachet::Status opened = config.ok() ? cachet::Cache::Open(*config).status() : config.status();
  Show("open (misspelt key)", opened);
  return opened.IsConfigError() ? 0 : 1;
}
