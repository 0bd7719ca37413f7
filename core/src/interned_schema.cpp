// A process-wide table of schema copies (see interned_schema.h).
#include "interned_schema.h"

#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <vector>

namespace cachet {

namespace {

bool SameText(const char* a, const char* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return std::strcmp(a, b) == 0;
}

bool SameSpec(const OptionSpec& a, const OptionSpec& b) {
  return SameText(a.name, b.name) && a.type == b.type &&
         SameText(a.default_value, b.default_value) && SameText(a.help, b.help) &&
         a.required == b.required && a.secret == b.secret && SameText(a.choices, b.choices);
}

// One copied schema: the specs point into `texts`, whose elements never move.
class SchemaCopy {
 public:
  explicit SchemaCopy(std::span<const OptionSpec> schema) {
    for (OptionSpec spec : schema) {
      spec.name = Keep(spec.name);
      spec.default_value = Keep(spec.default_value);
      spec.help = Keep(spec.help);
      spec.choices = Keep(spec.choices);
      specs_.push_back(spec);
    }
  }

  std::span<const OptionSpec> specs() const { return specs_; }

  bool Matches(std::span<const OptionSpec> schema) const {
    if (schema.size() != specs_.size()) return false;
    for (std::size_t i = 0; i < schema.size(); ++i) {
      if (!SameSpec(schema[i], specs_[i])) return false;
    }
    return true;
  }

 private:
  const char* Keep(const char* text) {
    if (text == nullptr) return nullptr;
    return texts_.emplace_back(text).c_str();
  }

  std::deque<std::string> texts_;
  std::vector<OptionSpec> specs_;
};

struct SchemaTable {
  std::mutex mutex;
  std::list<SchemaCopy> copies;  // a list: copies never move once made
};

SchemaTable& Table() {
  // Never destroyed, so spans handed out stay valid during static destruction too.
  static SchemaTable* table = new SchemaTable;
  return *table;
}

}  // namespace

std::span<const OptionSpec> InternSchema(std::span<const OptionSpec> schema) {
  if (schema.empty()) return {};
  SchemaTable& table = Table();
  std::lock_guard lock(table.mutex);
  for (const SchemaCopy& copy : table.copies) {
    if (copy.Matches(schema)) return copy.specs();
  }
  return table.copies.emplace_back(schema).specs();
}

}  // namespace cachet
