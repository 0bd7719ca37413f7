// A copy of a valid reply with a few bytes changed and, now and then, cut
// short: the inputs of the readers' seeded mutation tests, which check that
// every reading of it ends as the reference reading does.
#pragma once

#include <random>
#include <string>
#include <string_view>

namespace cachet::test {

// One to three bytes of `valid` replaced by bytes of `alphabet`, and one time
// in four the result cut at a random length. `random` is seeded by the test,
// so every run reads the same inputs. REQUIRES: `valid` and `alphabet` are not empty.
inline std::string MutatedReply(std::string_view valid, std::string_view alphabet,
                                std::mt19937& random) {
  std::string reply(valid);
  const int changes = 1 + static_cast<int>(random() % 3);
  for (int c = 0; c < changes; ++c) {
    reply[random() % reply.size()] = alphabet[random() % alphabet.size()];
  }
  if (random() % 4 == 0) reply.resize(random() % reply.size());
  return reply;
}

}  // namespace cachet::test
