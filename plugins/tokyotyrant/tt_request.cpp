// Tokyo Tyrant request encoder (see tt_request.h).
#include "tt_request.h"

#include <cmath>
#include <string>

namespace cachet::tokyotyrant {
namespace {

// Starts a request: magic and command byte.
void AppendHeader(Command command, std::string* out) {
  out->push_back(static_cast<char>(kMagic));
  out->push_back(static_cast<char>(command));
}

void AppendSize(std::string_view field, std::string* out) {
  AppendBigEndian32(static_cast<std::uint32_t>(field.size()), out);
}

void AppendInt32(std::int32_t v, std::string* out) {
  AppendBigEndian32(static_cast<std::uint32_t>(v), out);
}

// kTooLarge when `field` cannot be sent in one size field.
Status CheckField(std::string_view what, std::string_view field) {
  if (field.size() <= static_cast<std::size_t>(kMaxFieldSize)) return Status::OK();
  return Status::TooLarge("tokyotyrant: " + std::string(what) + " of " +
                          std::to_string(field.size()) + " bytes is over the 256 MiB limit");
}

Status CheckCount(std::size_t count) {
  if (count <= static_cast<std::size_t>(kMaxItems)) return Status::OK();
  return Status::TooLarge("tokyotyrant: " + std::to_string(count) +
                          " items are over the limit of 1048576 per request");
}

Status CheckKeyValue(std::string_view key, std::string_view value) {
  Status s = CheckField("key", key);
  return s.ok() ? CheckField("value", value) : s;
}

Status WrongCommand(Command command, std::string_view family) {
  return Status::InvalidArgument("tokyotyrant: " + std::string(CommandName(command)) +
                                 " is not a " + std::string(family) + " command");
}

}  // namespace

Status EncodeStore(Command command, std::string_view key, std::string_view value,
                   std::string* out) {
  if (command != Command::kPut && command != Command::kPutKeep && command != Command::kPutCat &&
      command != Command::kPutNr) {
    return WrongCommand(command, "store");
  }
  if (Status s = CheckKeyValue(key, value); !s.ok()) return s;
  AppendHeader(command, out);
  AppendSize(key, out);
  AppendSize(value, out);
  out->append(key);
  out->append(value);
  return Status::OK();
}

Status EncodePutShl(std::string_view key, std::string_view value, std::int32_t width,
                    std::string* out) {
  if (width < 0) return Status::InvalidArgument("tokyotyrant: putshl width is negative");
  if (Status s = CheckKeyValue(key, value); !s.ok()) return s;
  AppendHeader(Command::kPutShl, out);
  AppendSize(key, out);
  AppendSize(value, out);
  AppendInt32(width, out);
  out->append(key);
  out->append(value);
  return Status::OK();
}

Status EncodeKeyCommand(Command command, std::string_view key, std::string* out) {
  if (command != Command::kOut && command != Command::kGet && command != Command::kVsiz) {
    return WrongCommand(command, "single-key");
  }
  if (Status s = CheckField("key", key); !s.ok()) return s;
  AppendHeader(command, out);
  AppendSize(key, out);
  out->append(key);
  return Status::OK();
}

Status EncodeMget(std::span<const std::string_view> keys, std::string* out) {
  if (Status s = CheckCount(keys.size()); !s.ok()) return s;
  for (std::string_view key : keys) {
    if (Status s = CheckField("key", key); !s.ok()) return s;
  }
  AppendHeader(Command::kMget, out);
  AppendBigEndian32(static_cast<std::uint32_t>(keys.size()), out);
  for (std::string_view key : keys) {
    AppendSize(key, out);
    out->append(key);
  }
  return Status::OK();
}

Status EncodeFwmKeys(std::string_view prefix, std::int32_t max, std::string* out) {
  if (Status s = CheckField("prefix", prefix); !s.ok()) return s;
  AppendHeader(Command::kFwmKeys, out);
  AppendSize(prefix, out);
  AppendInt32(max, out);
  out->append(prefix);
  return Status::OK();
}

Status EncodeAddInt(std::string_view key, std::int32_t num, std::string* out) {
  if (Status s = CheckField("key", key); !s.ok()) return s;
  AppendHeader(Command::kAddInt, out);
  AppendSize(key, out);
  AppendInt32(num, out);
  out->append(key);
  return Status::OK();
}

Status EncodeAddDouble(std::string_view key, double num, std::string* out) {
  // 2^63 itself does not fit an int64, hence the strict bound.
  if (!std::isfinite(num) || std::fabs(num) >= 9223372036854775808.0) {
    return Status::InvalidArgument("tokyotyrant: adddouble needs a finite number below 2^63");
  }
  if (Status s = CheckField("key", key); !s.ok()) return s;
  std::int64_t integer = 0;
  std::int64_t fraction = 0;
  SplitDouble(num, &integer, &fraction);
  AppendHeader(Command::kAddDouble, out);
  AppendSize(key, out);
  AppendBigEndian64(static_cast<std::uint64_t>(integer), out);
  AppendBigEndian64(static_cast<std::uint64_t>(fraction), out);
  out->append(key);
  return Status::OK();
}

Status EncodeBare(Command command, std::string* out) {
  switch (command) {
    case Command::kIterInit:
    case Command::kIterNext:
    case Command::kSync:
    case Command::kVanish:
    case Command::kRnum:
    case Command::kSize:
    case Command::kStat:
      AppendHeader(command, out);
      return Status::OK();
    default:
      return WrongCommand(command, "argument-less");
  }
}

Status EncodeOptimize(std::string_view params, std::string* out) {
  if (Status s = CheckField("params", params); !s.ok()) return s;
  AppendHeader(Command::kOptimize, out);
  AppendSize(params, out);
  out->append(params);
  return Status::OK();
}

Status EncodeCopy(std::string_view path, std::string* out) {
  if (path.starts_with('@')) {
    return Status::InvalidArgument(
        "tokyotyrant: copy paths starting with '@' run a shell command on the server; refused");
  }
  if (Status s = CheckField("path", path); !s.ok()) return s;
  AppendHeader(Command::kCopy, out);
  AppendSize(path, out);
  out->append(path);
  return Status::OK();
}

Status EncodeRestore(std::string_view path, std::uint64_t timestamp_us, std::int32_t opts,
                     std::string* out) {
  if (Status s = CheckField("path", path); !s.ok()) return s;
  AppendHeader(Command::kRestore, out);
  AppendSize(path, out);
  AppendBigEndian64(timestamp_us, out);
  AppendInt32(opts, out);
  out->append(path);
  return Status::OK();
}

Status EncodeSetMaster(std::string_view host, std::int32_t port, std::uint64_t timestamp_us,
                       std::int32_t opts, std::string* out) {
  if (Status s = CheckField("host", host); !s.ok()) return s;
  AppendHeader(Command::kSetMaster, out);
  AppendSize(host, out);
  AppendInt32(port, out);
  AppendBigEndian64(timestamp_us, out);
  AppendInt32(opts, out);
  out->append(host);
  return Status::OK();
}

Status EncodeMisc(std::string_view name, std::int32_t opts, std::span<const std::string_view> args,
                  std::string* out) {
  if (Status s = CheckField("name", name); !s.ok()) return s;
  if (Status s = CheckCount(args.size()); !s.ok()) return s;
  for (std::string_view arg : args) {
    if (Status s = CheckField("argument", arg); !s.ok()) return s;
  }
  AppendHeader(Command::kMisc, out);
  AppendSize(name, out);
  AppendInt32(opts, out);
  AppendBigEndian32(static_cast<std::uint32_t>(args.size()), out);
  out->append(name);
  for (std::string_view arg : args) {
    AppendSize(arg, out);
    out->append(arg);
  }
  return Status::OK();
}

void SplitDouble(double num, std::int64_t* integer, std::int64_t* fraction) {
  const double whole = std::trunc(num);
  *integer = static_cast<std::int64_t>(whole);
  *fraction = static_cast<std::int64_t>(std::llround((num - whole) * kFractionScale));
}

double JoinDouble(std::int64_t integer, std::int64_t fraction) {
  return static_cast<double>(integer) + static_cast<double>(fraction) / kFractionScale;
}

}  // namespace cachet::tokyotyrant
