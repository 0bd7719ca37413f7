// ScriptClient: a Perl or Python memcached client (Cache::Memcached,
// Cache::Memcached::Fast, pymemcache, python-memcached, pylibmc) driven through the
// small scripts in scripts/, so the interop tests exercise the real Debian packages.
//
// A value crosses the script boundary as "key<TAB>kind<TAB>hex": the hex keeps any
// byte safe, the kind says what type the client wrote or read back (see the
// scripts' opening comments for the kinds each language knows).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cachet/result.h"
#include "cachet/status.h"

namespace cachet::test {

// One value as a client wrote or read it.
struct ClientValue {
  std::string kind;   // for example "bytes", "int", "str", "HASH", "undef"
  std::string bytes;  // the value's bytes (numbers as decimal text)
};

struct ClientWrite {
  std::string key;
  std::string kind;  // what the script makes of the bytes: bytes, text, int, hash/dict
  std::string bytes;
};

class ScriptClient {
 public:
  // `interpreter` runs `script`; `client` is the script's first argument.
  ScriptClient(std::string interpreter, std::string script, std::string client, int port);

  // ok when the client's package is installed; otherwise a status saying what is missing.
  Status Probe() const;
  // Stores each entry through the client, in order.
  Status Write(const std::vector<ClientWrite>& entries) const;
  // What the client reads for each key (kind "undef"/"NoneType" for a miss).
  Result<std::map<std::string, ClientValue>> Read(const std::vector<std::string>& keys) const;

  const std::string& client() const { return client_; }

 private:
  std::vector<std::string> Argv(const std::string& mode) const;

  std::string interpreter_;
  std::string script_;
  std::string client_;
  int port_;
};

// The Perl and Python clients, with the Debian interpreters (the packages install
// their modules for those, not for another perl or python3 first on PATH).
ScriptClient PerlClient(const std::string& client, int port);
ScriptClient PythonClient(const std::string& client, int port);

std::string ToHex(const std::string& bytes);

}  // namespace cachet::test
