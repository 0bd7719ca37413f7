// The shell's word splitter; see shell_words.h for the rules.
#include "shell_words.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace cachet::cli {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::optional<char> HexByte(std::string_view two) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(two.data(), two.data() + two.size(), value, 16);
  if (two.size() != 2 || ec != std::errc() || ptr != two.data() + 2) return std::nullopt;
  return static_cast<char>(value);
}

// Decodes the escape at line[*pos] (just after the backslash), advancing *pos.
std::optional<char> Escape(std::string_view line, std::size_t* pos) {
  if (*pos >= line.size()) return std::nullopt;
  const char c = line[(*pos)++];
  switch (c) {
    case '\\':
      return '\\';
    case '"':
      return '"';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case '0':
      return '\0';
    case 'x': {
      std::optional<char> byte = HexByte(line.substr(*pos, 2));
      if (byte) *pos += 2;
      return byte;
    }
    default:
      return std::nullopt;
  }
}

// Reads a quoted word starting after its opening quote; *pos ends after the
// closing quote.
Status ReadQuoted(std::string_view line, std::size_t* pos, std::string* word) {
  while (*pos < line.size()) {
    const char c = line[(*pos)++];
    if (c == '"') return Status::OK();
    if (c != '\\') {
      word->push_back(c);
      continue;
    }
    std::optional<char> escaped = Escape(line, pos);
    if (!escaped) return Status::InvalidArgument("bad escape in a quoted word");
    word->push_back(*escaped);
  }
  return Status::InvalidArgument("unterminated quote");
}

// Appends `bytes` with the escapes Escape() reads back.
void AppendEscaped(std::string_view bytes, std::string* out) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  for (const char c : bytes) {
    switch (c) {
      case '\\':
        *out += "\\\\";
        break;
      case '"':
        *out += "\\\"";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\0':
        *out += "\\0";
        break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7F) {
          out->push_back(c);
        } else {
          *out += "\\x";
          out->push_back(kHexDigits[byte >> 4]);
          out->push_back(kHexDigits[byte & 0xF]);
        }
      }
    }
  }
}

// "... (N bytes)" after input that was cut, nothing otherwise.
void AppendCutNote(std::string_view bytes, std::size_t max_bytes, std::string* out) {
  if (bytes.size() > max_bytes) *out += "... (" + std::to_string(bytes.size()) + " bytes)";
}

}  // namespace

std::string QuoteShellWord(std::string_view bytes, std::size_t max_bytes) {
  std::string quoted = "\"";
  AppendEscaped(bytes.substr(0, max_bytes), &quoted);
  quoted += '"';
  AppendCutNote(bytes, max_bytes, &quoted);
  return quoted;
}

std::string ShellValue(std::string_view bytes) {
  const bool plain =
      !bytes.empty() && bytes.front() != '"' && bytes.front() != ' ' && bytes.back() != ' ' &&
      bytes != kMissWord && !bytes.starts_with("ERROR ") &&
      std::all_of(bytes.begin(), bytes.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  return plain ? std::string(bytes) : QuoteShellWord(bytes, bytes.size());
}

std::string EscapeShellBytes(std::string_view bytes, std::size_t max_bytes) {
  std::string escaped;
  AppendEscaped(bytes.substr(0, max_bytes), &escaped);
  AppendCutNote(bytes, max_bytes, &escaped);
  return escaped;
}

Result<std::vector<std::string>> SplitShellWords(std::string_view line) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  while (pos < line.size()) {
    if (IsBlank(line[pos])) {
      ++pos;
      continue;
    }
    std::string word;
    if (line[pos] == '"') {
      ++pos;
      Status status = ReadQuoted(line, &pos, &word);
      if (!status.ok()) return status;
    } else {
      while (pos < line.size() && !IsBlank(line[pos])) word.push_back(line[pos++]);
    }
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace cachet::cli
