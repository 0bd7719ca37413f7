// ShellBatch: see shell_batch.h.
#include "shell_batch.h"

#include <optional>
#include <ostream>
#include <string_view>

#include "command_table.h"
#include "invocation.h"
#include "reply.h"
#include "shell_words.h"

namespace cachet::cli {
namespace {

// The single-key store commands, which a Batch can hold.
bool IsBatchable(std::string_view name) {
  for (std::string_view batchable : {"get", "gets", "set", "add", "replace", "append", "prepend",
                                     "cas", "del", "incr", "decr", "touch"}) {
    if (name == batchable) return true;
  }
  return false;
}

}  // namespace

void ShellBatch::Begin(CommandContext& ctx, const std::vector<std::string>& words) {
  if (open_) {
    ReportUsage(ctx, "a batch is already open (end it first)");
    return;
  }
  const bool noreply = words.size() == 2 && words[1] == "noreply";
  if (words.size() > 2 || (words.size() == 2 && !noreply)) {
    ReportUsage(ctx, "batch takes no argument but noreply");
    return;
  }
  batch_.Clear();
  batch_.set_noreply(noreply);
  lines_.clear();
  open_ = true;
}

void ShellBatch::Add(const std::vector<std::string>& words) {
  std::string usage;
  const CommandSpec* spec = FindCommand(words[0]);
  if (spec == nullptr || !IsBatchable(spec->name)) {
    usage = QuoteShellWord(words[0]) + " cannot be part of a batch";
  } else {
    Result<Invocation> inv =
        ParseInvocation(*spec, std::vector<std::string>(words.begin() + 1, words.end()));
    if (!inv.ok()) {
      usage = std::string(inv.status().message());
    } else if (inv->help) {
      usage = "--help is not taken inside a batch";
    } else if (AddCommand(*inv, &usage)) {
      return;
    }
  }
  AddUsageError(std::move(usage));
}

void ShellBatch::AddUsageError(std::string message) {
  lines_.push_back(Line{Shape::kUsage, {}, std::move(message), Status()});
}

void ShellBatch::AddFailure(Status failure) {
  lines_.push_back(Line{Shape::kFailure, {}, {}, std::move(failure)});
}

bool ShellBatch::AddCommand(const Invocation& inv, std::string* usage) {
  const std::string_view name = inv.spec->name;
  if (!IsBatchable(name)) {
    *usage = QuoteShellWord(name) + " cannot be part of a batch";
    return false;
  }
  const std::string& key = inv.args[0];
  // Values are inline in the shell; a missing one is a usage error here.
  // "-" (stdin) is refused as outside a batch: stdin holds the shell's commands.
  const bool has_value = inv.args.size() > (name == "cas" ? 2u : 1u) && inv.args.back() != "-";
  const auto value = [&]() -> std::string_view { return inv.args.back(); };
  // A noreply write's outcome may be unknown (memcached text): it prints OK once sent.
  const auto write = [&](BatchWrite handle, std::string word) {
    if (batch_.noreply()) word = "OK";
    lines_.push_back(Line{Shape::kWrite, handle, std::move(word), Status()});
    return true;
  };
  if (name == "get") {
    lines_.push_back(Line{Shape::kValue, batch_.Get(key), {}, Status()});
    return true;
  }
  if (name == "gets") {
    lines_.push_back(Line{Shape::kVersioned, batch_.Gets(key), {}, Status()});
    return true;
  }
  if (name == "incr" || name == "decr") {
    std::uint64_t delta = 1;
    if (inv.args.size() > 1) {
      std::optional<std::uint64_t> parsed = ParseUnsigned(inv.args[1]);
      if (!parsed) {
        *usage = "DELTA must be an unsigned 64-bit number";
        return false;
      }
      delta = *parsed;
    }
    const BatchCounter handle = name == "incr" ? batch_.Incr(key, delta) : batch_.Decr(key, delta);
    // A noreply counter's value is not read back.
    if (batch_.noreply()) {
      lines_.push_back(Line{Shape::kQuietCounter, handle, "OK", Status()});
      return true;
    }
    lines_.push_back(Line{Shape::kCounter, handle, {}, Status()});
    return true;
  }
  if (name == "del") return write(batch_.Remove(key), "DELETED");
  if (name == "touch") {
    std::optional<std::uint64_t> seconds = ParseUnsigned(inv.args[1]);
    if (!seconds) {
      *usage = "SECONDS must be a whole number from 0 to 18446744073709551615";
      return false;
    }
    return write(batch_.Touch(key, TtlFromUnsignedSeconds(*seconds)), "TOUCHED");
  }
  if (!has_value) {
    *usage = "inside a batch the value must be given inline";
    return false;
  }
  if (name == "set") return write(batch_.Set(key, value(), inv.ttl), "STORED");
  if (name == "add") return write(batch_.Add(key, value(), inv.ttl), "STORED");
  if (name == "replace") return write(batch_.Replace(key, value(), inv.ttl), "STORED");
  if (name == "append") return write(batch_.Append(key, value()), "STORED");
  if (name == "prepend") return write(batch_.Prepend(key, value()), "STORED");
  if (name == "cas") {
    std::optional<std::uint64_t> token = ParseUnsigned(inv.args[1]);
    if (!token) {
      *usage = "CAS must be the unsigned number printed by gets";
      return false;
    }
    return write(batch_.Cas(key, value(), *token, inv.ttl), "STORED");
  }
  return false;  // not reached: IsBatchable() lists exactly the names above
}

void ShellBatch::End(CommandContext& ctx) {
  if (!open_) {
    ReportUsage(ctx, "end without batch");
    return;
  }
  open_ = false;
  ctx.cache->Run(batch_);
  for (const Line& line : lines_) Print(ctx, line);
}

void ShellBatch::Abandon(CommandContext& ctx) {
  if (!open_) return;
  open_ = false;
  ReportUsage(ctx, "the input ended inside a batch; its " + std::to_string(lines_.size()) +
                       " commands were not run");
}

void ShellBatch::Print(CommandContext& ctx, const Line& line) const {
  switch (line.shape) {
    case Shape::kUsage:
      ReportUsage(ctx, line.text);
      return;
    case Shape::kFailure:
      ReportFailure(ctx, line.failure);
      return;
    case Shape::kWrite:
      ReportWrite(ctx, batch_.Outcome(std::get<BatchWrite>(line.handle)), line.text);
      return;
    case Shape::kQuietCounter:
      ReportWrite(ctx, batch_.StatusOf(std::get<BatchCounter>(line.handle)), line.text);
      return;
    case Shape::kCounter: {
      Result<std::uint64_t> value = batch_.Outcome(std::get<BatchCounter>(line.handle));
      if (!value.ok()) {
        ReportFailure(ctx, value.status());
      } else {
        PrintCounter(ctx, *value);
      }
      return;
    }
    case Shape::kValue: {
      Lookup<std::string> found = batch_.Outcome(std::get<BatchRead<std::string>>(line.handle));
      if (found.hit()) {
        ctx.out << ShellValue(*found) << '\n';
      } else if (found.miss()) {
        ctx.out << kMissWord << '\n';
      } else {
        ReportFailure(ctx, found.status());
      }
      return;
    }
    case Shape::kVersioned: {
      Lookup<Versioned<std::string>> found =
          batch_.Outcome(std::get<BatchVersionedRead<std::string>>(line.handle));
      if (found.hit()) {
        ctx.out << found->cas << ' ' << ShellValue(found->value) << '\n';
      } else if (found.miss()) {
        ctx.out << kMissWord << '\n';
      } else {
        ReportFailure(ctx, found.status());
      }
      return;
    }
  }
}

}  // namespace cachet::cli
