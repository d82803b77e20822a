#!/usr/bin/env bash
# The cutover: write-blocked window p50/p95/p99 of `rebalance cutover` and `--rollback` over cutover-and-rollback
# cycles with the application simulator writing 500/s through the guard, against the same cycles with every slot
# verified in the window (--verify-all); then the guarded application's write rate on either store against plain
# writes. With delay-ms, every DynamoDB call goes through a proxy that holds it that long (a target farther away).
# Usage: bench/cutover.sh [rows=200000] [cycles=20] [baseline-cycles=5] [seconds=10] [delay-ms=0]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-200000}; cycles=${2:-20}; baseline=${3:-5}; seconds=${4:-10}; delay=${5:-0}
source bench/lib.sh
bench_prepare
port=8113
bench_dynamodb_local "$port" cutover
java -Xmx4g -Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener -cp "$BENCH_CP" \
  io.rebalance.bench.CutoverBenchmark "http://127.0.0.1:$port" "$rows" "$cycles" \
  "$baseline" "$seconds" "$delay" 2> bench/results/cutover-bench.err | tee bench/results/cutover-bench.txt
