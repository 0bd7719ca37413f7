// Threads and fork: one Cache shared by every thread; a forked child may keep
// using the Cache it inherited (network stores open the child's own connections).
// Usage: example_threads_and_fork [CONFIG [section.key=value]...]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  // Threads: share one Cache; no lock of your own is needed around it.
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&cache, t] {
      for (int i = 0; i < 1000; ++i) (void)cache->Set("thread:" + std::to_string(t), i);
    });
  }
  for (std::thread& worker : workers) worker.join();

  // Fork when no other thread is inside a call: only the forking thread goes on
  // in the child. The child then uses the inherited Cache as it is.
  const pid_t child = fork();
  if (child == 0) {
    cachet::Lookup<std::int64_t> last = cache->Get<std::int64_t>("thread:0");
    _exit(last.hit() && *last == 999 ? 0 : 1);
  }
  int child_status = 0;
  if (child < 0 || waitpid(child, &child_status, 0) != child) return 3;

  std::printf("4 threads wrote, the child read: %s\n",
              WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0 ? "ok" : "failed");
  return WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 1;
}
