// The shell's bounded line reader; see line_reader.h.
#include "line_reader.h"

#include <array>
#include <istream>

namespace cachet::cli {

LineOutcome ReadBoundedLine(std::istream& in, std::size_t max_line, std::string* line,
                            std::size_t* length) {
  line->clear();
  *length = 0;
  std::array<char, 16 * 1024> chunk;
  // Bounded by the input: every pass takes at least one byte, or ends the line.
  for (;;) {
    in.getline(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto taken = static_cast<std::size_t>(in.gcount());
    // good(): the '\n' was taken (and counted). Only fail(): the chunk filled up
    // and the line goes on. Otherwise the input ended or could not be read.
    const bool ended_by_newline = in.good();
    const bool chunk_full = in.fail() && !in.eof() && !in.bad();
    const std::size_t stored = ended_by_newline ? taken - 1 : taken;
    *length += stored;
    if (*length <= max_line) {
      line->append(chunk.data(), stored);
    } else if (!line->empty()) {
      std::string().swap(*line);  // give back what the line held so far
    }
    if (chunk_full) {
      in.clear();
      continue;
    }
    if (!ended_by_newline && *length == 0) return LineOutcome::kEnd;
    return *length > max_line ? LineOutcome::kTooLong : LineOutcome::kLine;
  }
}

}  // namespace cachet::cli
