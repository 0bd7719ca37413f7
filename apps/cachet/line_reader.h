// ReadBoundedLine: the shell's reader of one input line, in chunks of bounded
// size, so that a line longer than the shell accepts is never held whole: it is
// read to its end, counted and dropped, and the next line is read as usual.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace cachet::cli {

enum class LineOutcome {
  kLine,     // *line holds the next line, without its '\n'
  kTooLong,  // the next line was over the limit and was skipped
  kEnd,      // no more input, or it cannot be read
};

// Reads the next line into `*line`; `*length` is its length in bytes, '\n'
// excluded, even when it was too long to keep. A last line without '\n' is a
// line.
LineOutcome ReadBoundedLine(std::istream& in, std::size_t max_line, std::string* line,
                            std::size_t* length);

}  // namespace cachet::cli
