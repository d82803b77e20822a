#!/usr/bin/env bash
# Copy throughput: naive single loop vs `rebalance copy` (one process, 512 MB heap) vs the raw BatchWriteItem
# ceiling of DynamoDB Local, and `rebalance copy` of the same rows with 1% refused, in one run; prints medians and the
# ratios. `bench/copy.sh 20000 73 3 8 25`: a small table in which a quarter of the rows hold a number DynamoDB cannot
# store, where the refused copy must take at most twice the clean copy's time.
# The same rows keyed by random uuids (key ranges, slots.timeFrom: none) against time-ordered ids, copied and
# verified in one run: bench/key-ranges.sh.
# Usage: bench/copy.sh [rows=1000000] [hours=240] [reps=3] [workers=8] [refusedPercent=1]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-1000000}; hours=${2:-240}; reps=${3:-3}; workers=${4:-8}; refused=${5:-1}
source bench/lib.sh
bench_prepare
port=8111
bench_dynamodb_local "$port" copy
java -Xmx6g -cp "$BENCH_CP" io.rebalance.bench.CopyBenchmark "http://127.0.0.1:$port" "$rows" "$hours" "$reps" "$workers" \
  bin/rebalance "$refused" 2> bench/results/copy-bench.err | tee bench/results/copy-bench.txt
