// Batches: many keys in one call, one outcome per key, in the order of the keys.
// Keys on different servers are fetched at once.
// Usage: example_batches [CONFIG [section.key=value]...]
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  // SetMulti: one Status per entry.
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"fruit:1", "apple"}, {"fruit:2", "pear"}, {"fruit:3", "plum"}};
  for (const cachet::Status& s : cache->SetMulti(entries, cachet::TtlFromSeconds(600))) {
    if (!s.ok()) return 3;
  }

  // GetMulti: one Lookup per key (hit, miss or error), typed like Get.
  const std::vector<std::string> keys = {"fruit:1", "fruit:2", "fruit:4"};
  std::vector<cachet::Lookup<std::string>> fruits = cache->GetMulti(keys);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::printf("%s: %s\n", keys[i].c_str(), fruits[i].value_or("(miss)").c_str());
  }

  // GetMultiInto: for a loop that reads batches again and again. The strings in
  // `values` are written in place and keep their capacity from call to call.
  const std::vector<std::string_view> hot = {"fruit:1", "fruit:2", "fruit:3"};
  std::vector<std::string> values;
  std::vector<cachet::Status> statuses;
  for (int round = 0; round < 1000; ++round) {
    cache->GetMultiInto(hot, &values, &statuses);  // statuses[i]: ok, not_found or an error
  }
  std::printf("%s %s %s\n", values[0].c_str(), values[1].c_str(), values[2].c_str());

  // RemoveMulti: ok for each key removed, not_found for one that was absent.
  std::vector<cachet::Status> removed = cache->RemoveMulti({"fruit:1", "fruit:4"});
  const bool as_expected =
      fruits[2].miss() && statuses[2].ok() && removed[0].ok() && removed[1].IsNotFound();
  return as_expected ? 0 : 1;
}
