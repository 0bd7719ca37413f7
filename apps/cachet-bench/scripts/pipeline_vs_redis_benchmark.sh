#!/bin/sh
# Interleaved rounds of cachet-bench's pipeline scenario (100 INCR through
# cachet::Batch, and hiredis's pipeline in the same process) and
# `redis-benchmark -c 1 -P 100 -t incr` on one redis-server: the same command
# (INCR of one key), the same depth (100), one connection each. The order
# flips every round so that neither side always runs first; each round prints
# INCR/s for all three and cachet's ratio to each, and the end prints the
# medians of the ratios and the load average.
#
# usage: pipeline_vs_redis_benchmark.sh BUILD_DIR CONFIG PORT [ROUNDS] [SECONDS]
set -eu
build=$1 config=$2 port=$3 rounds=${4:-6} seconds=${5:-1}
# redis-benchmark's request count for about `seconds` at its last rate.
requests=300000

cachet_rates() {  # prints "cachet_incr_per_s hiredis_incr_per_s"
  "$build/bin/cachet-bench" -c "$config" -o "redis.servers=127.0.0.1:$port" \
    --scenarios pipeline --duration "$seconds" --repeat 1 --format csv |
    awk -F, '$1 == "pipeline" && $2 == "redis" { c = $4 * 100 }
             $1 == "pipeline" && $2 == "hiredis" { h = $4 * 100 }
             END { printf "%.0f %.0f\n", c, h }'
}

benchmark_rate() {  # prints INCR/s
  rate=$(redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -P 100 -n "$requests" -t incr -q |
    tr '\r' '\n' | awk '/^INCR: [0-9.]+ requests per second/ { print $2 }' | tail -n 1)
  requests=$(awk -v r="$rate" -v s="$seconds" 'BEGIN { n = int(r * s / 100) * 100; print n < 100000 ? 100000 : n }')
  printf '%.0f\n' "$rate"
}

ratios=$(mktemp)
trap 'rm -f "$ratios"' EXIT
round=1
while [ "$round" -le "$rounds" ]; do
  if [ $((round % 2)) -eq 1 ]; then
    set -- $(cachet_rates); b=$(benchmark_rate)
  else
    b=$(benchmark_rate); set -- $(cachet_rates)
  fi
  echo "$round $1 $2 $b" | awk '{ printf "round %d: cachet %d, hiredis %d, redis-benchmark %d INCR/s; cachet/redis-benchmark %.2f, cachet/hiredis %.2f\n", $1, $2, $3, $4, $2 / $4, $2 / $3 }'
  echo "$1 $2 $b" | awk '{ print $1 / $3, $1 / $2 }' >>"$ratios"
  round=$((round + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median cachet/redis-benchmark $(cut -d' ' -f1 "$ratios" | median), cachet/hiredis $(cut -d' ' -f2 "$ratios" | median); $(uptime | sed 's/.*load/load/')"
