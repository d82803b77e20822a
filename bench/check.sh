#!/usr/bin/env bash
# `rebalance check`'s write-unit and item-byte estimate against the items `rebalance copy` then writes (DynamoDB's
# item-size rules applied to each, scanned back), and the check's time beside the copy's, on the demo's table.
# Usage: bench/check.sh [rows=200000] [hours=120] [reps=3]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-200000}; hours=${2:-120}; reps=${3:-3}
source bench/lib.sh
bench_prepare
port=8115
bench_dynamodb_local "$port" check
java -Xmx2g -cp "$BENCH_CP" io.rebalance.bench.CheckBenchmark "http://127.0.0.1:$port" "$rows" "$hours" "$reps" \
  bin/rebalance 2> bench/results/check-bench.err | tee bench/results/check-bench.txt
