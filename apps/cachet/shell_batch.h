// ShellBatch: `batch ... end` in `cachet shell`. The command lines between the
// two are added to one cachet::Batch; `end` runs it (one round trip per server)
// and prints one result line per command, in order, as the command alone would
// have printed it. `batch noreply` sends the batch's writes without waiting for
// their replies, where the store can (they print OK once sent).
//
// Inside a batch only single-key store commands are taken (get, gets, set, add,
// replace, append, prepend, cas, del, incr, decr, touch); any other line answers
// "ERROR usage: ..." in its place when the batch ends.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cachet/batch.h"
#include "command.h"

namespace cachet::cli {

class ShellBatch {
 public:
  explicit ShellBatch(Cache& cache) : batch_(cache) {}

  bool open() const noexcept { return open_; }
  // Starts a batch; `words` is the "batch" line ("batch" or "batch noreply").
  void Begin(CommandContext& ctx, const std::vector<std::string>& words);
  // Adds one command line's words to the open batch.
  void Add(const std::vector<std::string>& words);
  // A line of the open batch that could not be read: `message` is printed in
  // its place when the batch ends.
  void AddUsageError(std::string message);
  // A line of the open batch refused before it was read whole: `failure` is
  // printed in its place when the batch ends.
  void AddFailure(Status failure);
  // Runs the batch and prints one line per command.
  void End(CommandContext& ctx);
  // Forgets the open batch without running it (input ended inside it).
  void Abandon(CommandContext& ctx);

 private:
  // kQuietCounter: a noreply incr or decr, printed as a write (its value is not read).
  enum class Shape : std::uint8_t {
    kValue, kVersioned, kWrite, kCounter, kQuietCounter, kUsage, kFailure };
  struct Line {
    Shape shape;
    // The Batch handle of the line's operation (none for kUsage and kFailure).
    std::variant<std::monostate, BatchWrite, BatchCounter, BatchRead<std::string>,
                 BatchVersionedRead<std::string>>
        handle;
    std::string text;     // kWrite: the word printed on success; kUsage: the message
    Status failure;       // kFailure
  };

  // Adds a parsed command; false with `*usage` set when it cannot be batched.
  bool AddCommand(const Invocation& inv, std::string* usage);
  void Print(CommandContext& ctx, const Line& line) const;

  Batch batch_;
  std::vector<Line> lines_;
  bool open_ = false;
};

}  // namespace cachet::cli
