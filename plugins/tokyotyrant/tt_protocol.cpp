// Names and reply shapes of the Tokyo Tyrant commands.
#include "tt_protocol.h"

namespace cachet::tokyotyrant {

std::string_view CommandName(Command command) noexcept {
  switch (command) {
    case Command::kPut:
      return "put";
    case Command::kPutKeep:
      return "putkeep";
    case Command::kPutCat:
      return "putcat";
    case Command::kPutShl:
      return "putshl";
    case Command::kPutNr:
      return "putnr";
    case Command::kOut:
      return "out";
    case Command::kGet:
      return "get";
    case Command::kMget:
      return "mget";
    case Command::kVsiz:
      return "vsiz";
    case Command::kIterInit:
      return "iterinit";
    case Command::kIterNext:
      return "iternext";
    case Command::kFwmKeys:
      return "fwmkeys";
    case Command::kAddInt:
      return "addint";
    case Command::kAddDouble:
      return "adddouble";
    case Command::kSync:
      return "sync";
    case Command::kOptimize:
      return "optimize";
    case Command::kVanish:
      return "vanish";
    case Command::kCopy:
      return "copy";
    case Command::kRestore:
      return "restore";
    case Command::kSetMaster:
      return "setmst";
    case Command::kRnum:
      return "rnum";
    case Command::kSize:
      return "size";
    case Command::kStat:
      return "stat";
    case Command::kMisc:
      return "misc";
  }
  return "unknown";
}

ReplyShape ShapeOf(Command command) noexcept {
  switch (command) {
    case Command::kPutNr:
      return ReplyShape::kNone;
    case Command::kGet:
    case Command::kIterNext:
    case Command::kStat:
      return ReplyShape::kBytes;
    case Command::kVsiz:
    case Command::kAddInt:
      return ReplyShape::kInt32;
    case Command::kAddDouble:
      return ReplyShape::kDouble;
    case Command::kRnum:
    case Command::kSize:
      return ReplyShape::kUint64;
    case Command::kMget:
      return ReplyShape::kKeyValueList;
    case Command::kFwmKeys:
      return ReplyShape::kKeyList;
    case Command::kMisc:
      return ReplyShape::kMiscList;
    default:
      return ReplyShape::kStatus;
  }
}

}  // namespace cachet::tokyotyrant
