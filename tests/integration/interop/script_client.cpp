// ScriptClient: runs the client scripts with bounded I/O and a deadline, and
// translates between values and the scripts' hex lines.
#include "script_client.h"

#include <chrono>
#include <sstream>
#include <utility>

#include "integration/cli/run_command.h"

namespace cachet::test {

namespace {

// A safety net against a hung client, never something asserted.
constexpr std::chrono::seconds kScriptDeadline{30};

// The scripts exit with 2 when their client module is not installed.
constexpr int kMissingModuleExit = 2;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Status FromHex(const std::string& hex, std::string* out) {
  if (hex.size() % 2 != 0) return Status::Corruption("odd-length hex '" + hex + "'");
  out->clear();
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = HexDigit(hex[i]);
    const int low = HexDigit(hex[i + 1]);
    if (high < 0 || low < 0) return Status::Corruption("not hex: '" + hex + "'");
    out->push_back(static_cast<char>(high * 16 + low));
  }
  return Status::OK();
}

std::string Describe(const CommandOutcome& outcome) {
  return "exit " + std::to_string(outcome.exit_code) + ", stderr: " + outcome.err;
}

// Parses one "key<TAB>kind<TAB>hex" line of a read.
Status ParseReadLine(const std::string& line, std::map<std::string, ClientValue>* out) {
  const std::size_t first_tab = line.find('\t');
  const std::size_t second_tab =
      first_tab == std::string::npos ? std::string::npos : line.find('\t', first_tab + 1);
  if (second_tab == std::string::npos) return Status::Corruption("bad line '" + line + "'");
  ClientValue value;
  value.kind = line.substr(first_tab + 1, second_tab - first_tab - 1);
  Status s = FromHex(line.substr(second_tab + 1), &value.bytes);
  if (!s.ok()) return s;
  (*out)[line.substr(0, first_tab)] = std::move(value);
  return Status::OK();
}

}  // namespace

std::string ToHex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xF]);
  }
  return hex;
}

ScriptClient::ScriptClient(std::string interpreter, std::string script, std::string client,
                           int port)
    : interpreter_(std::move(interpreter)),
      script_(std::move(script)),
      client_(std::move(client)),
      port_(port) {}

std::vector<std::string> ScriptClient::Argv(const std::string& mode) const {
  return {interpreter_, script_, client_, std::to_string(port_), mode};
}

Status ScriptClient::Probe() const {
  const CommandOutcome outcome = RunCommand(Argv("probe"), {}, kScriptDeadline);
  if (outcome.exit_code == 0) return Status::OK();
  if (outcome.exit_code == kMissingModuleExit) return Status::Unsupported(outcome.err);
  return Status::Internal(client_ + " probe failed: " + Describe(outcome));
}

Status ScriptClient::Write(const std::vector<ClientWrite>& entries) const {
  std::string input;
  for (const ClientWrite& e : entries)
    input += e.key + '\t' + e.kind + '\t' + ToHex(e.bytes) + '\n';
  const CommandOutcome outcome = RunCommand(Argv("write"), input, kScriptDeadline);
  if (outcome.exit_code == 0) return Status::OK();
  return Status::Internal(client_ + " write failed: " + Describe(outcome));
}

Result<std::map<std::string, ClientValue>> ScriptClient::Read(
    const std::vector<std::string>& keys) const {
  std::vector<std::string> argv = Argv("read");
  argv.insert(argv.end(), keys.begin(), keys.end());
  const CommandOutcome outcome = RunCommand(argv, {}, kScriptDeadline);
  if (outcome.exit_code != 0) {
    return Status::Internal(client_ + " read failed: " + Describe(outcome));
  }
  std::map<std::string, ClientValue> values;
  std::istringstream lines(outcome.out);
  for (std::string line; std::getline(lines, line);) {
    Status s = ParseReadLine(line, &values);
    if (!s.ok()) return s;
  }
  return values;
}

ScriptClient PerlClient(const std::string& client, int port) {
  return ScriptClient("/usr/bin/perl", std::string(CACHET_INTEROP_SCRIPTS) + "/perl_client.pl",
                      client, port);
}

ScriptClient PythonClient(const std::string& client, int port) {
  return ScriptClient("/usr/bin/python3", std::string(CACHET_INTEROP_SCRIPTS) + "/python_client.py",
                      client, port);
}

}  // namespace cachet::test
