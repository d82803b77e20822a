#!/usr/bin/env bash
# The Postgres fence's cost: application writes (an UPDATE of a random row each) at a fixed rate, each write in one
# of four modes drawn at random inside the same run, so all four meet the same machine: plain on a table without the
# fence's trigger, plain on a table with it (disabled, as while the route is SOURCE), guarded as docs/cutover.md shows
# (fence checked with the commit, one round trip) and guarded with the check first; three runs; prints each mode's
# p50/p99 latency and the multixact IDs each run consumed, then the medians and the ratios to plain.
# Usage: bench/fence.sh [writes-per-second=2000] [seconds=40] [threads=16]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rate=${1:-2000}; seconds=${2:-40}; threads=${3:-16}
source bench/lib.sh
bench_prepare
java -cp "$BENCH_CP" io.rebalance.bench.FenceBenchmark "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres" \
  "$rate" "$seconds" "$threads" 2> bench/results/fence-bench.err | tee bench/results/fence-bench.txt
