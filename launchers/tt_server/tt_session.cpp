// TtSession: the binary protocol, request by request (see tt_session.h).
#include "tt_session.h"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "tt_stat.h"

namespace cachet::ttserver {
namespace {

constexpr std::uint8_t kMagic = 0xC8;
constexpr std::int32_t kMaxFieldSize = 256 << 20;
constexpr std::int32_t kMaxItems = 1 << 20;
constexpr double kFractionScale = 1e12;

}  // namespace

TtSession::TtSession(int fd, TtStore& store) : stream_(fd), store_(store) {}

void TtSession::Run() {
  std::uint8_t magic = 0;
  std::uint8_t command = 0;
  while (stream_.ReadByte(&magic) && magic == kMagic && stream_.ReadByte(&command) &&
         Dispatch(command)) {
  }
  (void)stream_.Flush();  // replies already earned are still delivered
}

bool TtSession::Dispatch(std::uint8_t command) {
  switch (command) {
    case 0x10:
    case 0x11:
    case 0x12:
    case 0x18:
      return HandleStore(command);
    case 0x13:
      return HandlePutShl();
    case 0x20:
      return HandleOut();
    case 0x30:
      return HandleGet();
    case 0x31:
      return HandleMget();
    case 0x38:
      return HandleVsiz();
    case 0x50:
      return HandleIterInit();
    case 0x51:
      return HandleIterNext();
    case 0x58:
      return HandleFwmKeys();
    case 0x60:
      return HandleAddInt();
    case 0x61:
      return HandleAddDouble();
    case 0x68:
      return HandleExt();
    case 0x70:
      return HandleSync();
    case 0x71:
      return HandleOptimize();
    case 0x72:
      return HandleVanish();
    case 0x73:
      return HandleCopy();
    case 0x74:
      return HandleRestore();
    case 0x78:
      return HandleSetMaster();
    case 0x80:
      return HandleRnum();
    case 0x81:
      return HandleSize();
    case 0x88:
      return HandleStat();
    case 0x90:
      return HandleMisc();
    default:
      return false;
  }
}

bool TtSession::ReadSize(std::int32_t* size) {
  return stream_.ReadInt32(size) && *size >= 0 && *size <= kMaxFieldSize;
}

bool TtSession::ReadSizedBytes(std::string* out) {
  std::int32_t size = 0;
  return ReadSize(&size) && stream_.ReadBytes(static_cast<std::size_t>(size), out);
}

bool TtSession::ReadCount(std::int32_t* count) {
  return stream_.ReadInt32(count) && *count >= 0 && *count <= kMaxItems;
}

bool TtSession::HandleStore(std::uint8_t command) {
  std::int32_t ksiz = 0;
  std::int32_t vsiz = 0;
  if (!ReadSize(&ksiz) || !ReadSize(&vsiz)) return false;
  if (!stream_.ReadBytes(static_cast<std::size_t>(ksiz), &key_) ||
      !stream_.ReadBytes(static_cast<std::size_t>(vsiz), &value_)) {
    return false;
  }
  switch (command) {
    case 0x10:
      ReplyStatus(store_.Put(key_, value_));
      break;
    case 0x11:
      ReplyStatus(store_.PutKeep(key_, value_));
      break;
    case 0x12:
      ReplyStatus(store_.PutCat(key_, value_));
      break;
    default:
      (void)store_.Put(key_, value_);
      break;  // putnr: no reply at all
  }
  return true;
}

bool TtSession::HandlePutShl() {
  std::int32_t ksiz = 0;
  std::int32_t vsiz = 0;
  std::int32_t width = 0;
  if (!ReadSize(&ksiz) || !ReadSize(&vsiz) || !stream_.ReadInt32(&width) || width < 0) {
    return false;
  }
  if (!stream_.ReadBytes(static_cast<std::size_t>(ksiz), &key_) ||
      !stream_.ReadBytes(static_cast<std::size_t>(vsiz), &value_)) {
    return false;
  }
  ReplyStatus(store_.PutShl(key_, value_, width));
  return true;
}

bool TtSession::HandleOut() {
  if (!ReadSizedBytes(&key_)) return false;
  ReplyStatus(store_.Out(key_));
  return true;
}

bool TtSession::HandleGet() {
  if (!ReadSizedBytes(&key_)) return false;
  std::optional<std::string> value = store_.Get(key_);
  ReplyStatus(value.has_value());
  if (value) {
    stream_.WriteInt32(static_cast<std::int32_t>(value->size()));
    stream_.WriteBytes(*value);
  }
  return true;
}

bool TtSession::HandleMget() {
  std::int32_t count = 0;
  if (!ReadCount(&count)) return false;
  std::vector<std::string> keys(static_cast<std::size_t>(count));
  for (std::string& key : keys) {
    if (!ReadSizedBytes(&key)) return false;
  }
  // Hits only, in request order; a key asked twice is answered twice.
  std::vector<std::pair<const std::string*, std::string>> hits;
  for (const std::string& key : keys) {
    std::optional<std::string> value = store_.Get(key);
    if (value) hits.emplace_back(&key, std::move(*value));
  }
  ReplyStatus(true);
  stream_.WriteInt32(static_cast<std::int32_t>(hits.size()));
  for (const auto& [key, value] : hits) {
    stream_.WriteInt32(static_cast<std::int32_t>(key->size()));
    stream_.WriteInt32(static_cast<std::int32_t>(value.size()));
    stream_.WriteBytes(*key);
    stream_.WriteBytes(value);
  }
  return true;
}

bool TtSession::HandleVsiz() {
  if (!ReadSizedBytes(&key_)) return false;
  const int size = store_.Vsiz(key_);
  ReplyStatus(size >= 0);
  if (size >= 0) stream_.WriteInt32(size);
  return true;
}

bool TtSession::HandleIterInit() {
  ReplyStatus(store_.IterInit());
  return true;
}

bool TtSession::HandleIterNext() {
  std::optional<std::string> key = store_.IterNext();
  ReplyStatus(key.has_value());
  if (key) {
    stream_.WriteInt32(static_cast<std::int32_t>(key->size()));
    stream_.WriteBytes(*key);
  }
  return true;
}

bool TtSession::HandleFwmKeys() {
  std::int32_t psiz = 0;
  std::int32_t max = 0;
  if (!ReadSize(&psiz) || !stream_.ReadInt32(&max)) return false;
  if (!stream_.ReadBytes(static_cast<std::size_t>(psiz), &key_)) return false;
  const std::vector<std::string> keys = store_.FwmKeys(key_, max);
  ReplyStatus(true);
  stream_.WriteInt32(static_cast<std::int32_t>(keys.size()));
  for (const std::string& key : keys) {
    stream_.WriteInt32(static_cast<std::int32_t>(key.size()));
    stream_.WriteBytes(key);
  }
  return true;
}

bool TtSession::HandleAddInt() {
  std::int32_t ksiz = 0;
  std::int32_t num = 0;
  if (!ReadSize(&ksiz) || !stream_.ReadInt32(&num)) return false;
  if (!stream_.ReadBytes(static_cast<std::size_t>(ksiz), &key_)) return false;
  std::optional<int> sum = store_.AddInt(key_, num);
  ReplyStatus(sum.has_value());
  if (sum) stream_.WriteInt32(*sum);
  return true;
}

bool TtSession::HandleAddDouble() {
  std::int32_t ksiz = 0;
  std::int64_t integer = 0;
  std::int64_t fraction = 0;
  if (!ReadSize(&ksiz) || !stream_.ReadInt64(&integer) || !stream_.ReadInt64(&fraction)) {
    return false;
  }
  if (!stream_.ReadBytes(static_cast<std::size_t>(ksiz), &key_)) return false;
  const double num = static_cast<double>(integer) + static_cast<double>(fraction) / kFractionScale;
  std::optional<double> sum = store_.AddDouble(key_, num);
  ReplyStatus(sum.has_value());
  if (sum) {
    const double whole = std::trunc(*sum);
    stream_.WriteInt64(static_cast<std::int64_t>(whole));
    stream_.WriteInt64(static_cast<std::int64_t>(std::llround((*sum - whole) * kFractionScale)));
  }
  return true;
}

bool TtSession::HandleExt() {
  std::int32_t nsiz = 0;
  std::int32_t opts = 0;
  std::int32_t ksiz = 0;
  std::int32_t vsiz = 0;
  if (!ReadSize(&nsiz) || !stream_.ReadInt32(&opts) || !ReadSize(&ksiz) || !ReadSize(&vsiz)) {
    return false;
  }
  std::string name;
  if (!stream_.ReadBytes(static_cast<std::size_t>(nsiz), &name) ||
      !stream_.ReadBytes(static_cast<std::size_t>(ksiz), &key_) ||
      !stream_.ReadBytes(static_cast<std::size_t>(vsiz), &value_)) {
    return false;
  }
  ReplyStatus(false);  // no Lua extension in the test server
  return true;
}

bool TtSession::HandleSync() {
  ReplyStatus(store_.Sync());
  return true;
}

bool TtSession::HandleOptimize() {
  if (!ReadSizedBytes(&value_)) return false;
  ReplyStatus(store_.Optimize(value_));
  return true;
}

bool TtSession::HandleVanish() {
  ReplyStatus(store_.Vanish());
  return true;
}

bool TtSession::HandleCopy() {
  if (!ReadSizedBytes(&value_)) return false;
  // ttserver would run an '@' path as a shell command; a test server never does.
  ReplyStatus(!value_.starts_with('@') && store_.Copy(value_));
  return true;
}

bool TtSession::HandleRestore() {
  std::int32_t psiz = 0;
  std::int64_t timestamp = 0;
  std::int32_t opts = 0;
  if (!ReadSize(&psiz) || !stream_.ReadInt64(&timestamp) || !stream_.ReadInt32(&opts)) {
    return false;
  }
  if (!stream_.ReadBytes(static_cast<std::size_t>(psiz), &value_)) return false;
  ReplyStatus(false);  // no update log in the test server
  return true;
}

bool TtSession::HandleSetMaster() {
  std::int32_t hsiz = 0;
  std::int32_t port = 0;
  std::int64_t timestamp = 0;
  std::int32_t opts = 0;
  if (!ReadSize(&hsiz) || !stream_.ReadInt32(&port) || !stream_.ReadInt64(&timestamp) ||
      !stream_.ReadInt32(&opts)) {
    return false;
  }
  if (!stream_.ReadBytes(static_cast<std::size_t>(hsiz), &value_)) return false;
  ReplyStatus(false);  // no replication in the test server
  return true;
}

bool TtSession::HandleRnum() {
  ReplyStatus(true);
  stream_.WriteInt64(static_cast<std::int64_t>(store_.Rnum()));
  return true;
}

bool TtSession::HandleSize() {
  ReplyStatus(true);
  stream_.WriteInt64(static_cast<std::int64_t>(store_.Size()));
  return true;
}

bool TtSession::HandleStat() {
  const std::string text = StatText(store_);
  ReplyStatus(true);
  stream_.WriteInt32(static_cast<std::int32_t>(text.size()));
  stream_.WriteBytes(text);
  return true;
}

bool TtSession::HandleMisc() {
  std::int32_t nsiz = 0;
  std::int32_t opts = 0;
  std::int32_t argc = 0;
  if (!ReadSize(&nsiz) || !stream_.ReadInt32(&opts) || !ReadCount(&argc)) return false;
  std::string name;
  if (!stream_.ReadBytes(static_cast<std::size_t>(nsiz), &name)) return false;
  std::vector<std::string> args(static_cast<std::size_t>(argc));
  for (std::string& arg : args) {
    if (!ReadSizedBytes(&arg)) return false;
  }
  std::optional<std::vector<std::string>> result = store_.Misc(name, args);
  // Failure is the status byte and a zero count: five bytes.
  ReplyStatus(result.has_value());
  stream_.WriteInt32(result ? static_cast<std::int32_t>(result->size()) : 0);
  if (result) {
    for (const std::string& element : *result) {
      stream_.WriteInt32(static_cast<std::int32_t>(element.size()));
      stream_.WriteBytes(element);
    }
  }
  return true;
}

}  // namespace cachet::ttserver
