#!/usr/bin/env bash
# The Postgres fence's cost: application writes (an UPDATE of a random row each) at a fixed rate: plain (no trigger),
# plain with the fence's trigger on the table, guarded as docs/cutover.md shows (fence checked with the commit, one
# round trip) and guarded with the check first (both with the trigger), three runs each alternated; prints p50/p99
# latency and the multixact IDs each run consumed, then the medians and the ratios.
# Usage: bench/fence.sh [writes-per-second=2000] [seconds=20] [threads=16]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rate=${1:-2000}; seconds=${2:-20}; threads=${3:-16}
source bench/lib.sh
bench_prepare
java -cp "$BENCH_CP" io.rebalance.bench.FenceBenchmark "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres" \
  "$rate" "$seconds" "$threads" 2> bench/results/fence-bench.err | tee bench/results/fence-bench.txt
