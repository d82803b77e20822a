#!/usr/bin/env bash
# The tail: events/s draining a backlog vs Debezium alone (no-op handler) vs the raw BatchWriteItem ceiling of
# DynamoDB Local, each repetition on the same backlog (two slots per repetition, made before the changes); then
# commit-to-item latency p50/p99 at a steady write rate, with the probe's own floor (PutItem direct). Medians.
# Usage: bench/tail.sh [changes=500000] [reps=3] [rate=1000] [seconds=30]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
changes=${1:-500000}; reps=${2:-3}; rate=${3:-1000}; seconds=${4:-30}
source bench/lib.sh
bench_prepare
port=8112
bench_dynamodb_local "$port" tail
java -Xmx6g -cp "$BENCH_CP" io.rebalance.bench.TailBenchmark "http://127.0.0.1:$port" "$changes" "$reps" \
  "$rate" "$seconds" 2> bench/results/tail-bench.err | tee bench/results/tail-bench.txt
