#!/bin/sh
# Interleaved rounds of cachet-bench and `redis-benchmark -c 1 -t incr` on one
# redis-server: the same command (INCR of one key), one connection each, at
# depth 100 (cachet-bench's pipeline scenario: 100 INCR through cachet::Batch,
# and hiredis's pipeline in the same process; redis-benchmark -P 100) or at
# depth 1 (the incr scenario; redis-benchmark -P 1). The order flips every
# round so that neither side always runs first; each round prints INCR/s for
# each and cachet's ratios, and the end prints the medians of the ratios and
# the load average.
#
# With TLS_CA set to a CA file, both sides speak TLS to a server listening with
# --tls-port on PORT: cachet with -o redis.tls=true -o redis.tls_ca_file=...,
# redis-benchmark with --tls --cacert (hiredis, which has no TLS here, is left
# out and reported as 0).
#
# usage: [TLS_CA=ca.crt] [DEPTH=100|1] pipeline_vs_redis_benchmark.sh BUILD_DIR CONFIG PORT
#        [ROUNDS] [SECONDS]
# CONFIG is a redis config whose file name is redis.conf (its rows are named so).
set -eu
build=$1 config=$2 port=$3 rounds=${4:-6} seconds=${5:-1}
depth=${DEPTH:-100}
# redis-benchmark's request count for about `seconds` at its last rate.
requests=300000
if [ "$depth" = 1 ]; then scenario=incr per=1; else scenario=pipeline per=100; fi
if [ -n "${TLS_CA:-}" ]; then
  set -- -o redis.tls=true -o "redis.tls_ca_file=$TLS_CA" --no-peers
  bench_tls="--tls --cacert $TLS_CA"
else
  set --
  bench_tls=""
fi
cachet_options="$*"

cachet_rates() {  # prints "cachet_incr_per_s hiredis_incr_per_s"
  # shellcheck disable=SC2086
  "$build/bin/cachet-bench" -c "$config" -o "redis.servers=127.0.0.1:$port" $cachet_options \
    --scenarios "$scenario" --duration "$seconds" --repeat 1 --format csv |
    awk -F, -v s="$scenario" -v per="$per" '$1 == s && $2 == "redis" { c = $4 * per }
             $1 == s && $2 == "hiredis" { h = $4 * per }
             END { printf "%.0f %.0f\n", c, h }'
}

benchmark_rate() {  # prints INCR/s
  # shellcheck disable=SC2086
  rate=$(redis-benchmark -h 127.0.0.1 -p "$port" $bench_tls -c 1 -P "$depth" -n "$requests" \
    -t incr -q | tr '\r' '\n' | awk '/^INCR: [0-9.]+ requests per second/ { print $2 }' |
    tail -n 1)
  requests=$(awk -v r="$rate" -v s="$seconds" 'BEGIN { n = int(r * s / 100) * 100; print n < 20000 ? 20000 : n }')
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
  echo "$round $1 $2 $b" | awk '{ printf "round %d: cachet %d, hiredis %d, redis-benchmark %d INCR/s; cachet/redis-benchmark %.2f, cachet/hiredis %.2f\n", $1, $2, $3, $4, $2 / $4, ($3 > 0 ? $2 / $3 : 0) }'
  echo "$1 $2 $b" | awk '{ print $1 / $3, ($2 > 0 ? $1 / $2 : 0) }' >>"$ratios"
  round=$((round + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median cachet/redis-benchmark $(cut -d' ' -f1 "$ratios" | median), cachet/hiredis $(cut -d' ' -f2 "$ratios" | median); $(uptime | sed 's/.*load/load/')"
