// The progress line on stderr for long runs: rewritten in place with '\r', and
// cleared before results are printed so it never mixes with them.
#pragma once

#include <string>

namespace cachet::bench {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { Clear(); }

  void Show(const std::string& text);
  void Clear();

 private:
  bool enabled_;
  std::size_t shown_ = 0;  // characters on the line now
};

}  // namespace cachet::bench
