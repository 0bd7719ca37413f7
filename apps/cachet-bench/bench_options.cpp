// cachet-bench's options with Boost.Program_options; its exceptions stop here.
#include "bench_options.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <exception>
#include <ostream>
#include <sstream>
#include <string_view>
#include <system_error>

#include "cachet/suggest.h"
#include "hit_ratio.h"
#include "memory_churn.h"

namespace cachet::bench {
namespace po = boost::program_options;
namespace {

po::options_description Description() {
  po::options_description options("Options");
  options.add_options()("config,c",
                        po::value<std::vector<std::string>>()->composing()->value_name("FILE"),
                        "a config to benchmark (repeatable; each becomes a table row)")(
      "option,o", po::value<std::vector<std::string>>()->composing()->value_name("S.K=V"),
      "override a config value in every config (repeatable)")(
      "scenarios", po::value<std::string>()->value_name("a,b"), "scenarios to run (default: all)")(
      "duration", po::value<double>()->value_name("SECONDS"),
      "time per scenario and config (default 1)")(
      "ops", po::value<std::uint64_t>()->value_name("N"),
      "a fixed number of iterations per scenario and config instead of a time")(
      "value-size", po::value<std::size_t>()->value_name("BYTES"), "value size (default 10)")(
      "slice-ms", po::value<std::uint64_t>()->value_name("MS"),
      "configs take turns in slices this long (default 100)")(
      "keys", po::value<std::size_t>()->value_name("N"),
      "keys get/set-like scenarios rotate through, each thread its own (default 100)")(
      "split-keys",
      "--keys is each column's: its threads split them, so get, set, set_delete and the "
      "serialized scenarios hold the same data at every thread count")(
      "threads", po::value<std::string>()->value_name("N[,M]"),
      "threads sharing each config's Cache (default 1); a list (1,2) gives each count its own "
      "columns and Caches, interleaved in one run")(
      "cache-per-thread",
      "each thread of a config's column opens a Cache of its own instead of sharing one, so "
      "the thread rows show what sharing costs")(
      "repeat", po::value<unsigned>()->value_name("N"),
      "repetitions; each figure is their median (default 3)")(
      "format", po::value<std::string>()->value_name("F"), "table | json | csv (default table)")(
      "svg", po::value<std::string>()->value_name("FILE"), "also write a bar chart to FILE")(
      "start-servers", "start throwaway memcached, redis-server and Tokyo Tyrant test servers")(
      "no-peers", "leave out the libmemcached and hiredis columns")(
      "baseline", "add a column: std::unordered_map under a std::shared_mutex per shard")(
      "list", "list the scenarios and exit")(
      "stampede", "run the GetOrCompute stampede study on the first config instead")(
      "loader-ms", po::value<std::uint64_t>()->value_name("MS"),
      "--stampede: how long the loader takes (default 50)")(
      "stampede-ttl-ms", po::value<std::uint64_t>()->value_name("MS"),
      "--stampede: the hot key's TTL (default 1000)")(
      "near", "run the near cache study on the first config instead (near_cache off, on, peer)")(
      "near-keys", po::value<std::size_t>()->value_name("N"),
      "--near: the Zipf key space (default 100000)")(
      "scaling",
      "instead, time work that shares nothing on one thread and on --threads (at least 2): about "
      "what a thread row could reach on this machine now")("help,h", "show this help");
  return options;
}

Status ParseScenarioList(const std::string& list, std::vector<const Scenario*>* out,
                         bool* hit_ratio, bool* memory_churn) {
  std::istringstream words(list);
  std::string name;
  while (std::getline(words, name, ',')) {
    if (name == kHitRatioScenario) {  // not a rate: it runs apart (hit_ratio.h)
      *hit_ratio = true;
      continue;
    }
    if (name == kMemoryChurnScenario) {  // likewise (memory_churn.h)
      *memory_churn = true;
      continue;
    }
    const Scenario* scenario = FindScenario(name);
    if (scenario == nullptr) {
      std::vector<std::string_view> names;
      for (const Scenario& known : AllScenarios()) names.emplace_back(known.name);
      const std::string suggestion = DidYouMean(name, names);
      return Status::InvalidArgument("unknown scenario '" + name + "'" +
                                     (suggestion.empty() ? " (see --list)" : suggestion));
    }
    out->push_back(scenario);
  }
  return out->empty() && !*hit_ratio && !*memory_churn
             ? Status::InvalidArgument("--scenarios names none")
             : Status::OK();
}

// "1,2,4": at most 8 thread counts, each a decimal number, none repeated.
Status ParseThreadCounts(const std::string& list, std::vector<unsigned>* out) {
  constexpr std::size_t kMostCounts = 8;
  out->clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    unsigned count = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
      return Status::InvalidArgument("--threads takes numbers separated by commas, not '" + list +
                                     "'");
    }
    if (std::find(out->begin(), out->end(), count) != out->end()) {
      return Status::InvalidArgument("--threads names " + item + " twice");
    }
    out->push_back(count);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out->size() > kMostCounts) return Status::InvalidArgument("--threads takes at most 8 counts");
  return Status::OK();
}

// --scaling needs no config and takes only --threads (one count), --duration
// and --repeat; the studies run one at a time.
Status CheckStudies(const BenchOptions& o) {
  if (int{o.stampede} + int{o.near} + int{o.scaling} > 1) {
    return Status::InvalidArgument("--stampede, --near and --scaling are separate runs: give one");
  }
  if (o.cache_per_thread && (o.stampede || o.near || o.scaling)) {
    return Status::InvalidArgument("--cache-per-thread applies to the scenarios, not to a study");
  }
  if (!o.scaling) {
    if (o.configs.empty()) return Status::InvalidArgument("give at least one -c FILE");
    return Status::OK();
  }
  if (!o.configs.empty() || o.ops > 0 || o.format != "table") {
    return Status::InvalidArgument("--scaling takes no -c, --ops or --format");
  }
  if (o.thread_counts.size() > 1) {
    return Status::InvalidArgument("--scaling compares one thread count with one thread");
  }
  if (o.duration_seconds < 0.01) {
    return Status::InvalidArgument("--scaling needs a --duration of at least 0.01 seconds");
  }
  return Status::OK();
}

Status Check(const BenchOptions& o) {
  if (o.help || o.list) return Status::OK();
  if (Status s = CheckStudies(o); !s.ok()) return s;
  if (!(o.duration_seconds > 0 && o.duration_seconds <= 86400)) {
    return Status::InvalidArgument("--duration must be in (0, 86400] seconds");
  }
  if (o.slice_ms == 0) return Status::InvalidArgument("--slice-ms must be at least 1");
  if (o.keys == 0 || o.keys > 1000000) return Status::InvalidArgument("--keys must be in [1, 1e6]");
  for (const unsigned threads : o.thread_counts) {
    if (threads == 0 || threads > 256) {
      return Status::InvalidArgument("--threads must be in [1, 256]");
    }
  }
  if (o.repeat == 0 || o.repeat > 1000)
    return Status::InvalidArgument("--repeat must be in [1, 1000]");
  if (o.loader_ms > 60000) return Status::InvalidArgument("--loader-ms must be at most 60000");
  if (o.stampede_ttl_ms == 0 || o.stampede_ttl_ms > 3600000) {
    return Status::InvalidArgument("--stampede-ttl-ms must be in [1, 3600000]");
  }
  if (o.near_keys == 0 || o.near_keys > 10000000) {
    return Status::InvalidArgument("--near-keys must be in [1, 1e7]");
  }
  if (o.format != "table" && o.format != "json" && o.format != "csv") {
    return Status::InvalidArgument("--format must be table, json or csv, not '" + o.format + "'");
  }
  return Status::OK();
}

Status Store(const po::variables_map& vm, BenchOptions* o) {
  if (vm.count("config")) o->configs = vm["config"].as<std::vector<std::string>>();
  if (vm.count("option")) o->overrides = vm["option"].as<std::vector<std::string>>();
  if (vm.count("duration")) o->duration_seconds = vm["duration"].as<double>();
  if (vm.count("ops")) o->ops = vm["ops"].as<std::uint64_t>();
  if (vm.count("value-size")) o->value_size = vm["value-size"].as<std::size_t>();
  if (vm.count("slice-ms")) o->slice_ms = vm["slice-ms"].as<std::uint64_t>();
  if (vm.count("keys")) o->keys = vm["keys"].as<std::size_t>();
  o->split_keys = vm.count("split-keys") > 0;
  o->cache_per_thread = vm.count("cache-per-thread") > 0;
  if (vm.count("threads")) {
    if (Status s = ParseThreadCounts(vm["threads"].as<std::string>(), &o->thread_counts); !s.ok()) {
      return s;
    }
  }
  if (vm.count("repeat")) o->repeat = vm["repeat"].as<unsigned>();
  if (vm.count("format")) o->format = vm["format"].as<std::string>();
  if (vm.count("svg")) o->svg_path = vm["svg"].as<std::string>();
  o->start_servers = vm.count("start-servers") > 0;
  o->peers = vm.count("no-peers") == 0;
  o->baseline = vm.count("baseline") > 0;
  o->list = vm.count("list") > 0;
  o->help = vm.count("help") > 0;
  o->stampede = vm.count("stampede") > 0;
  o->near = vm.count("near") > 0;
  o->scaling = vm.count("scaling") > 0;
  if (vm.count("near-keys")) o->near_keys = vm["near-keys"].as<std::size_t>();
  if (vm.count("loader-ms")) o->loader_ms = vm["loader-ms"].as<std::uint64_t>();
  if (vm.count("stampede-ttl-ms")) o->stampede_ttl_ms = vm["stampede-ttl-ms"].as<std::uint64_t>();
  if (vm.count("scenarios"))
    return ParseScenarioList(vm["scenarios"].as<std::string>(), &o->scenarios, &o->hit_ratio,
                             &o->memory_churn);
  for (const Scenario& s : AllScenarios()) o->scenarios.push_back(&s);
  return Status::OK();
}

}  // namespace

Result<BenchOptions> ParseBenchOptions(const std::vector<std::string>& args) {
  BenchOptions options;
  try {
    po::variables_map vm;
    std::vector<std::string> words(args.begin() + (args.empty() ? 0 : 1), args.end());
    po::store(po::command_line_parser(words).options(Description()).run(), vm);
    Status status = Store(vm, &options);
    if (!status.ok()) return status;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
  Status status = Check(options);
  if (!status.ok()) return status;
  return options;
}

void PrintBenchHelp(std::ostream& out) {
  out << "usage: cachet-bench -c A.conf [-c B.conf]... [options]\n\n"
      << "Runs the seed scenarios against each config, configs taking turns in short\n"
      << "slices, and prints one table per scenario like Perl's cmpthese: rows sorted by\n"
      << "rate (iterations per wall-clock second), then how much faster each row is than\n"
      << "each column. Rows are labelled by the config file's stem; the peers\n"
      << "(libmemcached, hiredis) run beside the first memcached and redis config.\n"
      << "Each figure is the median of --repeat repetitions, with its spread and the\n"
      << "client CPU time per iteration.\n\n"
      << Description();
}

}  // namespace cachet::bench
