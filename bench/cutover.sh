#!/usr/bin/env bash
# The cutover: write-blocked window p50/p95/p99 of `rebalance cutover` and `--rollback` over cutover-and-rollback
# cycles with the application simulator writing 500/s through the guard, against the same cycles with every slot
# verified in the window (--verify-all); then the guarded application's write rate on either store against plain
# writes. With delay-ms, every DynamoDB call goes through a proxy that holds it that long (a target farther away).
# Usage: bench/cutover.sh [rows=200000] [cycles=20] [baseline-cycles=5] [seconds=10] [delay-ms=0]
# Parted: bench/cutover.sh parted [rows-per-tenant=2000] [cycles=5] [seconds=10]: 20 tenants, the pilot (one tenant)
# cut over and rolled back again and again under 300 writes/s: its window p50/p95, and the other tenants' write p99
# during its commands against no window, three rounds and their medians.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = parted ]; then
  per=${2:-2000}; cycles=${3:-5}; seconds=${4:-10}
  source bench/lib.sh
  bench_prepare
  port=8114
  bench_dynamodb_local "$port" parted
  java -Xmx4g -Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener -cp "$BENCH_CP" \
    io.rebalance.bench.PartedCutoverBenchmark "http://127.0.0.1:$port" "$per" "$cycles" "$seconds" \
    2> bench/results/cutover-parted.err | tee bench/results/cutover-parted.txt
  exit 0
fi
rows=${1:-200000}; cycles=${2:-20}; baseline=${3:-5}; seconds=${4:-10}; delay=${5:-0}
source bench/lib.sh
bench_prepare
port=8113
bench_dynamodb_local "$port" cutover
java -Xmx4g -Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener -cp "$BENCH_CP" \
  io.rebalance.bench.CutoverBenchmark "http://127.0.0.1:$port" "$rows" "$cycles" \
  "$baseline" "$seconds" "$delay" 2> bench/results/cutover-bench.err | tee bench/results/cutover-bench.txt
